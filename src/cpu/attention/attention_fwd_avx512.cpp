// Causal attention forward for AVX-512 (kernels layer): the template of
// attention_forward_impl.hpp instantiated with AttentionAvx512Ops. An entry of the attention
// kernel list (attention_kernel_list.cpp).
#include "cpu/attention/attention_forward_impl.hpp"
#include "cpu/attention/attention_ops_avx512.hpp"

namespace ampkit::cpu {

void attention_forward_avx512(const ops::AttentionForwardProblem& p) {
  vector_attention_forward<AttentionAvx512Ops>(p);
}

}  // namespace ampkit::cpu
