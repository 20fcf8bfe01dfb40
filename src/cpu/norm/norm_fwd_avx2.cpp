// LayerNorm/RMSNorm forward for AVX2 (kernels layer): the templates of norm_forward_impl.hpp
// instantiated with Avx2Ops. Entries of the norm kernel list (norm_kernel_list.cpp).
#include "cpu/norm/norm_forward_impl.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {

void layer_norm_fwd_avx2(const ops::NormForwardProblem& p) { norm_forward_dispatch<Avx2Ops, false>(p); }
void rms_norm_fwd_avx2(const ops::NormForwardProblem& p) { norm_forward_dispatch<Avx2Ops, true>(p); }

}  // namespace ampkit::cpu
