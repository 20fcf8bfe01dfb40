// Causal attention backward for AVX2 (kernels layer): the template of
// attention_backward_impl.hpp instantiated with AttentionAvx2Ops. An entry of the attention
// kernel list (attention_kernel_list.cpp).
#include "cpu/attention/attention_backward_impl.hpp"
#include "cpu/attention/attention_ops_avx2.hpp"

namespace ampkit::cpu {

void attention_backward_avx2(const ops::AttentionBackwardProblem& p) { vector_attention_backward<AttentionAvx2Ops>(p); }

}  // namespace ampkit::cpu
