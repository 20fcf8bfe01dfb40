// Causal attention forward for AVX2 (kernels layer): the template of
// attention_forward_impl.hpp instantiated with AttentionAvx2Ops. An entry of the attention
// kernel list (attention_kernel_list.cpp); and its vector exp, for the tests.
#include "cpu/attention/attention_forward_impl.hpp"
#include "cpu/attention/attention_ops_avx2.hpp"

namespace ampkit::cpu {

void attention_forward_avx2(const ops::AttentionForwardProblem& p) { vector_attention_forward<AttentionAvx2Ops>(p); }

void attention_exp_avx2(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t L = AttentionAvx2Ops::kLanes;
  float in[L], out[L];
  for (std::int64_t i = 0; i < n; i += L) {
    const std::int64_t m = n - i < L ? n - i : L;
    for (std::int64_t l = 0; l < L; ++l) in[l] = l < m ? x[i + l] : 0.0f;
    AttentionAvx2Ops::store(out, AttentionAvx2Ops::exp(AttentionAvx2Ops::load(in)));
    for (std::int64_t l = 0; l < m; ++l) y[i + l] = out[l];
  }
}

}  // namespace ampkit::cpu
