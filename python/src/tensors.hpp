// Tensors in and out of the Python module (python/src/): any object with __dlpack__ (torch.Tensor,
// numpy.ndarray >= 1.22), a raw DLPack capsule, or an object with the buffer protocol (older
// NumPy, read-only arrays, array.array) becomes a TensorView over the same memory, with no copy;
// HostTensor is host memory owned by the module, exported through __dlpack__ (docs/PYTHON.md).
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "dlpack_abi.hpp"

namespace ampkit::python {

namespace py = pybind11;

/// The operands of one call: each view() borrows an object's memory (a DLPack tensor or a
/// buffer) until the Borrowed is destroyed, which releases them (with the GIL held).
class Borrowed {
 public:
  Borrowed() = default;
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
  ~Borrowed();

  /// The view of `obj` (None: an absent view). `function` and `name` name the call and the
  /// argument in the message of the ampkit::Error (invalid_argument, or unsupported for a device
  /// ampkit has no backend for) thrown for anything else. `output`: the call writes it, so a
  /// read-only buffer is refused.
  TensorView view(py::handle obj, const char* function, const char* name, bool output = false);

 private:
  void keep(dlpack::DLManagedTensor* managed);
  std::array<dlpack::DLManagedTensor*, 12> managed_{};
  int managed_count_ = 0;
  std::vector<dlpack::DLManagedTensor*> more_managed_;
  std::vector<std::unique_ptr<Py_buffer>> buffers_;
};

/// Host memory owned by the module (64-byte aligned), for outputs no framework allocates (NumPy
/// has no bf16). Shared by every DLPack export of it, so it lives as long as the last consumer.
struct HostStorage {
  void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};
  ~HostStorage();
};

struct HostTensor {
  std::shared_ptr<HostStorage> storage;
  TensorView view() const;
};

/// A zero-filled contiguous HostTensor. Throws ampkit::Error.
HostTensor host_empty(const std::vector<std::int64_t>& shape, DType dtype);
/// A "dltensor" capsule over the tensor's memory; whoever consumes it keeps the storage alive.
py::capsule host_to_dlpack(const HostTensor& tensor);

/// Registers HostTensor (as ampkit.HostTensor) and ampkit.empty.
void bind_tensors(py::module_& m);

}  // namespace ampkit::python
