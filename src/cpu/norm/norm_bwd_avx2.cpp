// LayerNorm/RMSNorm backward for AVX2 (kernels layer): the templates of
// norm_backward_impl.hpp instantiated with Avx2Ops. Entries of the norm kernel list
// (norm_kernel_list.cpp).
#include "cpu/norm/norm_backward_impl.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {

void layer_norm_bwd_avx2(const ops::NormBackwardProblem& p) { norm_backward_dispatch<Avx2Ops, false>(p); }
void rms_norm_bwd_avx2(const ops::NormBackwardProblem& p) { norm_backward_dispatch<Avx2Ops, true>(p); }

}  // namespace ampkit::cpu
