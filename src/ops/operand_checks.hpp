// Checks of TensorView operands shared by the op and layer front ends (ops layer, internal). Two
// readings of a view, one vocabulary:
// - contiguous views (norm, convert, attention, Linear): structure (rank, dims, dtype, device,
//   contiguity, byte size), shapes against a reference view, the pairwise overlap of a call's
//   operands;
// - strided rows (the training-graph ops: elementwise, activation, embedding, softmax
//   cross-entropy, optimizer): a view read as [rows, n] with a row stride, presence, device,
//   dtype, shape and overlap checks on that reading.
// Each throws ampkit::Error naming the function, the operand, what was expected and what was
// given; messages are built only on failure, so an accepted call allocates nothing.
// Two stages (Stage): the descriptor rules (no memory needed) and the memory rules; the checks
// that look at a view's data take the stage and do nothing of it in Stage::descriptor.
#pragma once

#include <cstdint>

#include "ampkit/core/tensor.hpp"
#include "ops/check_stage.hpp"

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
                                 const char* owner, Stage stage);

/// Throws unless `v` is present ("<name> must be given (<what>), but it is absent").
void check_given(const char* fn, const char* name, const TensorView& v, const char* what);

/// Stage 2: throws unless v.data is non-null when v has elements ("<name> must point to
/// <describe> <what>, but got null"). Nothing in Stage::descriptor.
void check_data(const char* fn, const char* name, const TensorView& v, const char* what, Stage stage);

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
/// Stage 2: in Stage::descriptor it records nothing and run() passes.
class OverlapCheck {
 public:
  static constexpr int kMaxOperands = 12;
  OverlapCheck(const char* fn, Stage stage) : fn_(fn), stage_(stage) {}
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
  Stage stage_;
  Range ranges_[kMaxOperands] = {};
  int count_ = 0;
};

// ---- strided rows: the training-graph ops ----

/// A view read as a [rows, n] matrix: last dim contiguous, rows `row_stride` elements apart
/// (leading dims collapsed; rank 0 is [1, 1], rank 1 is [1, n]).
struct RowsOperand {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  std::int64_t row_stride = 0;
  std::int64_t bytes() const;  // from data to the end of the last element; 0 when empty
  bool empty() const { return rows == 0 || n == 0; }
};

/// `view` must be present and in CPU memory.
void check_cpu_operand(const char* fn, const char* name, const TensorView& view);
/// `view` (present, CPU) must have a float dtype (f32, bf16 or f16).
void check_float_operand(const char* fn, const char* name, const TensorView& view);
/// `view` (present, CPU) must have dtype `want`.
void check_dtype(const char* fn, const char* name, const TensorView& view, DType want);
/// `view` must have rank `rank`.
void check_rank(const char* fn, const char* name, const TensorView& view, int rank);
/// `b` must have the shape of `a`.
void check_same_shape(const char* fn, const char* a_name, const TensorView& a, const char* b_name, const TensorView& b);
/// `view` as [rows, n] (see RowsOperand): non-negative strides, last dim contiguous, leading
/// dims collapsible to one row stride >= n, and (stage 2) data non-null when there are elements.
RowsOperand as_rows(const char* fn, const char* name, const TensorView& view, Stage stage);
/// A contiguous view as [1, numel] (the optimizer's flat parameters); data as in as_rows.
RowsOperand as_flat(const char* fn, const char* name, const TensorView& view, Stage stage);
/// Stage 2: output `out` must not share memory with `in` (any overlap is rejected).
void check_disjoint(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                    const RowsOperand& in, Stage stage);
/// Stage 2: output `out` must either be exactly `in` (same memory, dtype and layout: in place) or
/// not share memory with it.
void check_disjoint_or_same(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                            const RowsOperand& in, Stage stage);
/// A finite float argument.
void check_finite(const char* fn, const char* name, float value);

// ---- strided rows on the cpu or one GPU (the training-graph ops that have CUDA lists) ----

/// The device of one call: that of its first operand (`owner`), which every other operand must
/// share (docs/CUDA.md: "every operand of one call must be on one device").
struct OnDevice {
  Device device = Device::cpu;
  int index = 0;
  const char* owner = "";
};

/// `view` (present, rank in range) is the call's first operand: its device must be the cpu or a
/// usable GPU (unsupported when CUDA cannot run). Returns the call's device.
OnDevice call_device(const char* fn, const char* name, const TensorView& view);
/// check_cpu_operand / check_float_operand / check_dtype on the call's device `dev`.
void check_operand_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev);
void check_float_operand_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev);
void check_dtype_on(const char* fn, const char* name, const TensorView& view, DType want, const OnDevice& dev);
/// as_rows / as_flat, and on a GPU (stage 2): the memory must be device memory of that GPU
/// (looked up, never read).
RowsOperand as_rows_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev, Stage stage);
RowsOperand as_flat_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev, Stage stage);
/// Stage 2: on a GPU, `bytes` (> 0) from `data` must be device memory of that GPU; nothing on the
/// cpu.
void check_device_memory(const char* fn, const char* name, const void* data, std::int64_t bytes, const OnDevice& dev,
                         Stage stage);

}  // namespace ampkit::ops
