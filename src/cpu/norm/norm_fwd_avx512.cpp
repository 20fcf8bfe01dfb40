// LayerNorm/RMSNorm forward for AVX512 (kernels layer): the templates of norm_forward_impl.hpp
// instantiated with Avx512Ops. Entries of the norm kernel list (norm_kernel_list.cpp).
#include "cpu/norm/norm_forward_impl.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {

void layer_norm_fwd_avx512(const ops::NormForwardProblem& p) { norm_forward_dispatch<Avx512Ops, false>(p); }
void rms_norm_fwd_avx512(const ops::NormForwardProblem& p) { norm_forward_dispatch<Avx512Ops, true>(p); }

}  // namespace ampkit::cpu
