// Causal attention forward for AVX2 (kernels layer): the template of
// attention_forward_impl.hpp instantiated with AttentionAvx2Ops. An entry of the attention
// kernel list (attention_kernel_list.cpp).
#include "cpu/attention/attention_forward_impl.hpp"
#include "cpu/attention/attention_ops_avx2.hpp"

namespace ampkit::cpu {

void attention_forward_avx2(const ops::AttentionForwardProblem& p) { vector_attention_forward<AttentionAvx2Ops>(p); }

}  // namespace ampkit::cpu
