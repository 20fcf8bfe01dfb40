// The LayerNorm/RMSNorm kernel list (kernels layer): best first, reference last; the choice of
// the first usable entry; the per-thread scratch of the dgamma/dbeta block partials.
// Read by norm_front_end.cpp and the tests.
#include "cpu/norm/norm_kernels.hpp"

#include <atomic>
#include <new>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/norm.hpp"
#include "cpu/common/kernel_select.hpp"

namespace ampkit {
namespace cpu {

std::span<const NormKernel> norm_kernels() {
  static const NormKernel kernels[] = {
      {"avx512bf16", Isa::avx512, true,                          //
       "layer_norm_fwd_avx512bf16", layer_norm_forward_avx512bf16,   //
       "layer_norm_bwd_avx512bf16", layer_norm_backward_avx512bf16,  //
       "rms_norm_fwd_avx512bf16", rms_norm_forward_avx512bf16,       //
       "rms_norm_bwd_avx512bf16", rms_norm_backward_avx512bf16},
      {"avx512", Isa::avx512, false,                                  //
       "layer_norm_fwd_avx512", layer_norm_forward_avx512,       //
       "layer_norm_bwd_avx512", layer_norm_backward_avx512,      //
       "rms_norm_fwd_avx512", rms_norm_forward_avx512,           //
       "rms_norm_bwd_avx512", rms_norm_backward_avx512},
      {"avx2", Isa::avx2, false,                                      //
       "layer_norm_fwd_avx2", layer_norm_forward_avx2,           //
       "layer_norm_bwd_avx2", layer_norm_backward_avx2,          //
       "rms_norm_fwd_avx2", rms_norm_forward_avx2,               //
       "rms_norm_bwd_avx2", rms_norm_backward_avx2},
      {"ref", Isa::ref, false,                                       //
       "layer_norm_fwd_ref", layer_norm_forward_ref,             //
       "layer_norm_bwd_ref", layer_norm_backward_ref,            //
       "rms_norm_fwd_ref", rms_norm_forward_ref,                 //
       "rms_norm_bwd_ref", rms_norm_backward_ref},
  };
  return kernels;
}

namespace {
std::atomic<const NormKernel*> g_forced{nullptr};
}  // namespace

const NormKernel& selected_norm_kernel() {
  if (const NormKernel* forced = g_forced.load(std::memory_order_relaxed)) return *forced;
  const std::span<const NormKernel> kernels = norm_kernels();
  for (const NormKernel& k : kernels)
    if (kernel_usable(k.isa, k.needs_bf16_instructions)) return k;
  return kernels.back();
}

ForcedNormKernel::ForcedNormKernel(const NormKernel& k) : previous_(g_forced.exchange(&k)) {}
ForcedNormKernel::~ForcedNormKernel() { g_forced.store(previous_); }

namespace {

struct Scratch {
  float* data = nullptr;
  std::int64_t capacity = 0;
  ~Scratch() { ::operator delete[](data, std::align_val_t{64}); }
};

float* grow(Scratch& scratch, std::int64_t floats) {
  if (floats > scratch.capacity) {
    ::operator delete[](scratch.data, std::align_val_t{64});
    scratch.data = nullptr;
    scratch.capacity = 0;
    const std::int64_t grown = floats + floats / 2;
    scratch.data = static_cast<float*>(::operator new[](
        static_cast<std::size_t>(grown) * sizeof(float), std::align_val_t{64}));
    scratch.capacity = grown;
  }
  return scratch.data;
}

}  // namespace

float* norm_scratch(std::int64_t floats) {
  thread_local Scratch scratch;
  return grow(scratch, floats);
}

float* norm_row_scratch(std::int64_t floats) {
  thread_local Scratch scratch;
  return grow(scratch, floats);
}

}  // namespace cpu

const char* norm_kernel_name(bool rms, bool backward, DType x_dtype, DType param_dtype) {
  constexpr const char* fn = "norm_kernel_name";
  if (x_dtype != DType::f32 && x_dtype != DType::bf16 && x_dtype != DType::f16)
    fail(fn, "x_dtype must be f32, bf16 or f16, but got ", static_cast<int>(x_dtype));
  if (param_dtype != x_dtype && param_dtype != DType::f32)
    fail(fn, "param_dtype must be x's dtype (", dtype_name(x_dtype), ") or f32, but got ",
         dtype_name(param_dtype));
  const cpu::NormKernel& k = cpu::selected_norm_kernel();
  if (rms) return backward ? k.rms_backward_name : k.rms_forward_name;
  return backward ? k.layer_backward_name : k.layer_forward_name;
}

}  // namespace ampkit
