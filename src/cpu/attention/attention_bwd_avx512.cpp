// Causal attention backward for AVX-512 (kernels layer): the template of
// attention_backward_impl.hpp instantiated with AttentionAvx512Ops. An entry of the attention
// kernel list (attention_kernel_list.cpp).
#include "cpu/attention/attention_backward_impl.hpp"
#include "cpu/attention/attention_ops_avx512.hpp"

namespace ampkit::cpu {

void attention_backward_avx512(const ops::AttentionBackwardProblem& p) {
  vector_attention_backward<AttentionAvx512Ops>(p);
}

}  // namespace ampkit::cpu
