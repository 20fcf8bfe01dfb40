// Checks of TensorView operands shared by the op and layer front ends (ops layer, internal):
// structure (rank, dims, dtype, device, contiguity, byte size), shapes against a reference view,
// and the pairwise overlap of a call's operands. Each throws ampkit::Error naming the function
// and the operand; messages are built only on failure, so an accepted call allocates nothing.
// Called by src/ops/norm, src/ops/convert and src/layers/linear.cpp.
#pragma once

#include <cstdint>

#include "ampkit/core/tensor.hpp"

namespace ampkit::ops {

/// A present view of a floating dtype (f32, bf16, f16) in host memory, row-major contiguous,
/// with 0 <= rank <= kMaxRank, every dim >= 0 and a byte size that fits in int64. Returns the
/// byte size. Throws Error (invalid_argument; unsupported for device memory) otherwise.
std::int64_t check_float_view(const char* fn, const char* name, const TensorView& v);

/// check_float_view for an op that runs on the cpu and on cuda: `v` must be on the call's device
/// (`device`:`device_index`, the device of the operand named `owner`). A cuda operand when CUDA
/// cannot run is unsupported ("x is in cuda:0 memory, but <why>"); a device index with no GPU, a
/// pointer that is not device memory of that GPU and operands on two devices are invalid.
std::int64_t check_float_view_on(const char* fn, const char* name, const TensorView& v, Device device, int device_index,
                                 const char* owner);

/// Throws unless `v` is present ("<name> must be given (<what>), but it is absent").
void check_given(const char* fn, const char* name, const TensorView& v, const char* what);

/// Throws unless v.data is non-null when v has elements ("<name> must point to <describe>
/// <what>, but got null").
void check_data(const char* fn, const char* name, const TensorView& v, const char* what);

/// True when v's shape is `dims[0..rank)`.
bool has_shape(const TensorView& v, const std::int64_t* dims, int rank);

/// Throws "<name> must have shape <dims> (<what>), but got <v's shape>" unless v has `dims`.
void check_shape(const char* fn, const char* name, const TensorView& v, const std::int64_t* dims, int rank,
                 const char* what);

/// Throws "<name> dtype must be <want_text> (<want>), but got <got>" unless v.dtype == want.
void check_dtype_is(const char* fn, const char* name, const TensorView& v, DType want, const char* want_text);

/// Throws "<name> dtype must be <owner_text> (<owner>) or f32, but got <got>" unless v.dtype is
/// `owner` or f32.
void check_dtype_or_f32(const char* fn, const char* name, const TensorView& v, DType owner, const char* owner_text);

/// The operands of one call, for the overlap rule: no output may share a byte with any other
/// operand (input or output). Holds at most kMaxOperands; absent or empty views are skipped.
class OverlapCheck {
 public:
  static constexpr int kMaxOperands = 12;
  explicit OverlapCheck(const char* fn) : fn_(fn) {}
  /// `bytes` as returned by check_float_view.
  void add(const char* name, const TensorView& v, std::int64_t bytes, bool output);
  /// Throws "<a> (<shape dtype>) must not overlap <b> (<shape dtype>), but their memory ranges
  /// overlap" for the first offending pair.
  void run() const;

 private:
  struct Range {
    const char* name;
    const TensorView* view;
    std::int64_t bytes;
    bool output;
  };
  const char* fn_;
  Range ranges_[kMaxOperands] = {};
  int count_ = 0;
};

}  // namespace ampkit::ops
