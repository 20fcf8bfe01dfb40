// LayerNorm/RMSNorm backward for AVX-512 with AVX512_BF16 (kernels layer): the templates of
// norm_backward_impl.hpp instantiated with Avx512Ops in a unit compiled with -mavx512bf16, so bf16
// outputs are rounded by vcvtneps2bf16 (core/simd_avx512.hpp; same bits as the integer path).
// Entries of the norm kernel list (norm_kernel_list.cpp).
#include "cpu/norm/norm_backward_impl.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {

void layer_norm_bwd_avx512bf16(const ops::NormBackwardProblem& p) { norm_backward_dispatch<Avx512Ops, false>(p); }
void rms_norm_bwd_avx512bf16(const ops::NormBackwardProblem& p) { norm_backward_dispatch<Avx512Ops, true>(p); }

}  // namespace ampkit::cpu
