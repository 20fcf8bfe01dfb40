// Bulk conversion front end (ops layer): validates either form of convert (pointers + count, or
// two TensorViews) into one problem, selects the kernel once from the list
// (cpu/convert/convert_kernel_list.cpp) and runs it; also the check, kernel-name and
// kernel-status queries. Nothing is written when an argument is rejected.
#include "ampkit/ops/convert.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/convert/convert_kernels.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/kernel_registry.hpp"
#include "ops/operand_checks.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

constexpr const char* kFn = "convert";

std::string dtype_text(DType t) {
  const std::string_view name = dtype_name(t);
  if (name == "?") return "the value " + std::to_string(static_cast<int>(t));
  return std::string(name);
}

// Bytes of n elements of t, and the end of [p, p + bytes) inside the address space.
std::int64_t checked_bytes(const char* name, const void* p, DType t, std::int64_t n) {
  const auto bytes = checked_mul(n, static_cast<std::int64_t>(dtype_size(t)));
  if (!bytes) fail(kFn, name, " has n = ", n, " elements of ", dtype_name(t), ", whose byte size overflows int64");
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  if (start + static_cast<std::uintptr_t>(*bytes) < start)
    fail(kFn, name, " + ", *bytes, " bytes runs past the end of the address space");
  return *bytes;
}

// The checks both forms share, on pointers, dtypes and the element count.
ops::ConvertProblem validate(const void* src, DType from, void* dst, DType to, std::int64_t n,
                             ops::Stage stage = ops::Stage::call) {
  if (!is_float_dtype(from)) fail(kFn, "src dtype must be f32, bf16 or f16, but got ", dtype_text(from));
  if (!is_float_dtype(to)) fail(kFn, "dst dtype must be f32, bf16 or f16, but got ", dtype_text(to));
  if (n < 0) fail(kFn, "n must be >= 0, but got ", n);
  if (stage == ops::Stage::descriptor) return {src, from, dst, to, n};  // the rest is stage 2
  if (n > 0 && src == nullptr) fail(kFn, "src is null with n = ", n);
  if (n > 0 && dst == nullptr) fail(kFn, "dst is null with n = ", n);
  const std::int64_t src_bytes = checked_bytes("src", src, from, n);
  const std::int64_t dst_bytes = checked_bytes("dst", dst, to, n);
  if (!(src == dst && from == to) && ranges_overlap(src, src_bytes, dst, dst_bytes))
    fail(kFn, "dst must not overlap src (in place only with the same dtype), but they overlap");
  return {src, from, dst, to, n};
}

ops::ConvertProblem validate(const TensorView& src, const TensorView& dst, ops::Stage stage = ops::Stage::call) {
  ops::check_given(kFn, "src", src, "the input");
  ops::check_given(kFn, "dst", dst, "the output, src's shape");
  // Both on src's device: the cpu, or one GPU (the CUDA list then runs the call).
  ops::check_float_view_on(kFn, "src", src, src.device, src.device_index, "src", stage);
  ops::check_float_view_on(kFn, "dst", dst, src.device, src.device_index, "src", stage);
  ops::check_shape(kFn, "dst", dst, src.shape.data(), src.rank, "src's shape");
  ops::ConvertProblem p = validate(src.data, src.dtype, dst.data, dst.dtype, src.numel(), stage);
  p.device = src.device;
  p.device_index = src.device_index;
  return p;
}

std::span<const ops::ConvertEntry> kernels(const ops::ConvertProblem& p) {
  return ops::backend(p.device).kernels().convert;
}

void run(const ops::ConvertProblem& p) {
  ops::PreparedConvert call(kFn, kernels(p), p);
  ops::run_prepared(call);
}

}  // namespace

void convert(const void* src, DType src_type, void* dst, DType dst_type, std::int64_t n) {
  run(validate(src, src_type, dst, dst_type, n));
}

namespace ops {

PreparedConvert prepare_convert(const TensorView& src, const TensorView& dst) {
  const ConvertProblem p = validate(src, dst);
  return PreparedConvert(kFn, kernels(p), p);
}

void run_prepared(PreparedConvert& call) {
  const ConvertProblem& p = call.problem();
  if (p.n == 0 || p.src == p.dst) return;  // nothing to convert, or in place with one dtype
  call.entry().run(p);
}

}  // namespace ops

void convert(const TensorView& src, const TensorView& dst) {
  ops::PreparedConvert call = ops::prepare_convert(src, dst);
  ops::run_prepared(call);
}

std::string convert_check(const TensorView& src, const TensorView& dst) noexcept {
  return ops::check_message(kFn, [&] { validate(src, dst); });
}

std::string convert_descriptor_check(const TensorView& src, const TensorView& dst) noexcept {
  return ops::check_message(kFn, [&] { validate(src, dst, ops::Stage::descriptor); });
}

const char* convert_kernel_name(const TensorView& src, const TensorView& dst) {
  const ops::ConvertProblem p = validate(src, dst);
  return ops::select_kernel(kernels(p), p).name;
}

std::vector<KernelStatus> convert_kernel_statuses(const TensorView& src, const TensorView& dst) {
  const ops::ConvertProblem p = validate(src, dst);
  return ops::kernel_statuses(kernels(p), p);
}

}  // namespace ampkit
