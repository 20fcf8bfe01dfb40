// DLPack and buffer-protocol import into TensorView, HostTensor and its DLPack export
// (tensors.hpp).
#include "tensors.hpp"

#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit::python {

namespace {

using dlpack::DLManagedTensor;

[[noreturn]] void bad(const char* function, const char* name, const std::string& what,
                      ErrorKind kind = ErrorKind::invalid_argument) {
  throw Error(detail::concat(function, ": ", name, ": ", what), kind);
}

std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

const char* dl_dtype_text(dlpack::DLDataType t, char* buf, std::size_t size) {
  const char* code = t.code == dlpack::kDLFloat    ? "float"
                     : t.code == dlpack::kDLInt    ? "int"
                     : t.code == dlpack::kDLUInt   ? "uint"
                     : t.code == dlpack::kDLBfloat ? "bfloat"
                                                   : "code";
  std::snprintf(buf, size, "%s%d%s", code, t.bits, t.lanes == 1 ? "" : "xN");
  return buf;
}

DType dtype_of(dlpack::DLDataType t, const char* function, const char* name) {
  if (t.lanes == 1) {
    if (t.code == dlpack::kDLFloat && t.bits == 32) return DType::f32;
    if (t.code == dlpack::kDLFloat && t.bits == 16) return DType::f16;
    if (t.code == dlpack::kDLBfloat && t.bits == 16) return DType::bf16;
    if (t.code == dlpack::kDLInt && t.bits == 32) return DType::i32;
  }
  char buf[32];
  bad(function, name,
      detail::concat("expected dtype f32, bf16, f16 or i32, but got ", dl_dtype_text(t, buf, sizeof buf)));
}

TensorView view_of_dltensor(const dlpack::DLTensor& t, const char* function, const char* name) {
  TensorView v;
  if (t.ndim < 0 || t.ndim > kMaxRank)
    bad(function, name, detail::concat("expected rank <= ", kMaxRank, ", but got rank ", t.ndim));
  v.dtype = dtype_of(t.dtype, function, name);
  switch (t.device.device_type) {
    case dlpack::kDLCPU:
    case dlpack::kDLCUDAHost: v.device = Device::cpu; break;
    case dlpack::kDLCUDA:
    case dlpack::kDLCUDAManaged:  // the CUDA backend's pointer check refuses managed memory, saying so
      v.device = Device::cuda;
      v.device_index = t.device.device_id;
      break;
    default:
      bad(function, name,
          detail::concat("expected a cpu or cuda tensor, but got DLPack device type ", t.device.device_type),
          ErrorKind::unsupported);
  }
  v.rank = t.ndim;
  std::int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    v.shape[i] = t.shape[i];
    v.strides[i] = t.strides ? t.strides[i] : stride;
    stride *= t.shape[i];
  }
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  v.present = true;
  return v;
}

// Py_buffer format characters ampkit takes (native byte order, standard sizes).
bool dtype_of_format(const char* format, Py_ssize_t itemsize, DType& out) {
  if (!format) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (format[1] != '\0') return false;
  switch (*format) {
    case 'f': out = DType::f32; return itemsize == 4;
    case 'e': out = DType::f16; return itemsize == 2;
    case 'i':
    case 'l': out = DType::i32; return itemsize == 4;
    default: return false;
  }
}

PyObject* cached_torch_tensor_type = nullptr;
PyObject* cached_torch_to_dlpack = nullptr;

// torch.Tensor's own __dlpack__ is Python code that refuses tensors requiring grad (an
// autograd.Function's inputs do); torch._C._to_dlpack is the same export without the checks.
bool is_torch_tensor(py::handle obj) {
  if (!cached_torch_tensor_type) {
    PyObject* modules = PyImport_GetModuleDict();
    PyObject* torch = PyDict_GetItemString(modules, "torch");  // borrowed; only once torch is imported
    if (!torch) return false;
    py::object t = py::reinterpret_borrow<py::object>(torch);
    if (!py::hasattr(t, "Tensor") || !py::hasattr(t, "_C") || !py::hasattr(t.attr("_C"), "_to_dlpack")) return false;
    cached_torch_tensor_type = py::object(t.attr("Tensor")).release().ptr();
    cached_torch_to_dlpack = py::object(t.attr("_C").attr("_to_dlpack")).release().ptr();
  }
  return PyObject_IsInstance(obj.ptr(), cached_torch_tensor_type) == 1;
}

void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName));
    if (managed && managed->deleter) managed->deleter(managed);
  }
}

struct ExportContext {
  DLManagedTensor managed;
  std::shared_ptr<HostStorage> storage;
  std::array<std::int64_t, kMaxRank> shape, strides;
};

void export_deleter(DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); }

}  // namespace

Borrowed::~Borrowed() {
  for (int i = 0; i < managed_count_; ++i)
    if (managed_[i]->deleter) managed_[i]->deleter(managed_[i]);
  for (DLManagedTensor* m : more_managed_)
    if (m->deleter) m->deleter(m);
  for (auto& b : buffers_) PyBuffer_Release(b.get());
}

void Borrowed::keep(DLManagedTensor* managed) {
  if (managed_count_ < static_cast<int>(managed_.size()))
    managed_[managed_count_++] = managed;
  else
    more_managed_.push_back(managed);
}

TensorView Borrowed::view(py::handle obj, const char* function, const char* name, bool output) {
  if (obj.is_none()) return TensorView{};
  if (py::isinstance<HostTensor>(obj)) return obj.cast<const HostTensor&>().view();

  py::object capsule;
  std::string dlpack_error;
  if (is_torch_tensor(obj)) {
    PyObject* c = PyObject_CallOneArg(cached_torch_to_dlpack, obj.ptr());
    if (!c) throw py::error_already_set();
    capsule = py::reinterpret_steal<py::object>(c);
  } else if (PyCapsule_CheckExact(obj.ptr())) {
    capsule = py::reinterpret_borrow<py::object>(obj);
  } else if (py::hasattr(obj, "__dlpack__")) {
    try {
      capsule = obj.attr("__dlpack__")();
    } catch (py::error_already_set& e) {  // e.g. NumPy refuses read-only arrays: try the buffer
      dlpack_error = e.what();
    }
  }
  if (capsule) {
    if (!PyCapsule_IsValid(capsule.ptr(), dlpack::kCapsuleName))
      bad(function, name, "expected an unused DLPack capsule (\"dltensor\"), but got one already consumed");
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), dlpack::kCapsuleName));
    PyCapsule_SetName(capsule.ptr(), dlpack::kUsedCapsuleName);
    keep(managed);
    return view_of_dltensor(managed->dl_tensor, function, name);
  }

  if (PyObject_CheckBuffer(obj.ptr())) {
    auto buffer = std::make_unique<Py_buffer>();
    const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (output ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), buffer.get(), flags) != 0) {
      py::error_already_set e;
      bad(function, name,
          detail::concat(output ? "expected a writable tensor (an output), but got " : "expected a tensor, but got ",
                         type_name(obj), " (", e.what(), ")"));
    }
    Py_buffer* b = buffer.get();
    buffers_.push_back(std::move(buffer));
    TensorView v;
    if (!dtype_of_format(b->format, b->itemsize, v.dtype))
      bad(function, name,
          detail::concat("expected dtype f32, f16 or i32 (buffer formats f, e, i), but got format '",
                         b->format ? b->format : "B", "' of ", b->itemsize, " bytes"));
    if (b->ndim > kMaxRank)
      bad(function, name, detail::concat("expected rank <= ", kMaxRank, ", but got rank ", b->ndim));
    v.rank = b->ndim;
    for (int i = 0; i < b->ndim; ++i) {
      v.shape[i] = b->shape[i];
      if (b->strides[i] % b->itemsize != 0)
        bad(function, name,
            detail::concat("expected strides that are whole elements, but got a stride of ", b->strides[i], " bytes"));
      v.strides[i] = b->strides[i] / b->itemsize;
    }
    v.data = b->buf;
    v.present = true;
    return v;
  }
  if (!dlpack_error.empty()) bad(function, name, detail::concat(type_name(obj), ".__dlpack__ failed: ", dlpack_error));
  bad(function, name,
      detail::concat("expected a tensor (an object with __dlpack__, a DLPack capsule or a buffer) or None, but got ",
                     type_name(obj)));
}

HostStorage::~HostStorage() { ::operator delete (data, std::align_val_t{64}, std::nothrow); }

TensorView HostTensor::view() const {
  TensorView v;
  v.data = storage->data;
  v.dtype = storage->dtype;
  v.rank = storage->rank;
  v.shape = storage->shape;
  v.strides = storage->strides;
  v.present = true;
  return v;
}

HostTensor host_empty(const std::vector<std::int64_t>& shape, DType dtype) {
  if (shape.size() > static_cast<std::size_t>(kMaxRank))
    fail("ampkit.empty", "shape: expected rank <= ", kMaxRank, ", but got rank ", shape.size());
  auto storage = std::make_shared<HostStorage>();
  storage->dtype = dtype;
  storage->rank = static_cast<int>(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) fail("ampkit.empty", "shape: expected dims >= 0, but got ", shape[i]);
    storage->shape[i] = shape[i];
  }
  const TensorView probe(nullptr, dtype, storage->shape.data(), storage->rank);  // checks the size
  storage->strides = probe.strides;
  const std::int64_t bytes = probe.bytes();
  storage->data = ::operator new (static_cast<std::size_t>(bytes > 0 ? bytes : 1), std::align_val_t{64}, std::nothrow);
  if (!storage->data) fail_with(ErrorKind::out_of_memory, "ampkit.empty", "could not allocate ", bytes, " bytes");
  std::memset(storage->data, 0, static_cast<std::size_t>(bytes));
  return HostTensor{std::move(storage)};
}

py::capsule host_to_dlpack(const HostTensor& tensor) {
  auto* ctx = new ExportContext{};
  ctx->storage = tensor.storage;
  ctx->shape = tensor.storage->shape;
  ctx->strides = tensor.storage->strides;
  dlpack::DLTensor& t = ctx->managed.dl_tensor;
  t.data = tensor.storage->data;
  t.device = {dlpack::kDLCPU, 0};
  t.ndim = tensor.storage->rank;
  const DType d = tensor.storage->dtype;
  t.dtype = {d == DType::bf16  ? dlpack::kDLBfloat
             : d == DType::i32 ? dlpack::kDLInt
                               : dlpack::kDLFloat,
             static_cast<std::uint8_t>(dtype_size(d) * 8), 1};
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = export_deleter;
  PyObject* c = PyCapsule_New(&ctx->managed, dlpack::kCapsuleName, capsule_destructor);
  if (!c) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(c);
}

void bind_tensors(py::module_& m) {
  py::class_<HostTensor>(m, "HostTensor",
                         "Host memory owned by ampkit (64-byte aligned, contiguous), exported without a copy "
                         "through __dlpack__ (torch.from_dlpack, numpy.from_dlpack).")
      .def(
          "__dlpack__", [](const HostTensor& t, py::object /*stream*/) { return host_to_dlpack(t); },
          py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const HostTensor&) { return py::make_tuple(dlpack::kDLCPU, 0); })
      .def_property_readonly("shape",
                             [](const HostTensor& t) {
                               py::tuple s(t.storage->rank);
                               for (int i = 0; i < t.storage->rank; ++i) s[i] = t.storage->shape[i];
                               return s;
                             })
      .def_property_readonly("dtype", [](const HostTensor& t) { return std::string(dtype_name(t.storage->dtype)); })
      .def("data_ptr", [](const HostTensor& t) { return reinterpret_cast<std::uintptr_t>(t.storage->data); })
      .def("__repr__", [](const HostTensor& t) { return "ampkit.HostTensor(" + t.view().describe() + ")"; });
  m.def(
      "empty",
      [](const std::vector<std::int64_t>& shape, const std::string& dtype) {
        return host_empty(shape, parse_dtype(dtype, "ampkit.empty: dtype"));
      },
      py::arg("shape"), py::arg("dtype") = "f32",
      "A zero-filled contiguous HostTensor of `shape` and `dtype` ('f32', 'bf16', 'f16', 'i32').");
}

}  // namespace ampkit::python
