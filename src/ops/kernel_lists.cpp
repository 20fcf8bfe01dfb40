// Every op's kernel list in one place (ops layer): what `ampkit info --kernels` prints and what
// the graph's op table reads. Each list is declared by its op (src/ops/<op>/) and defined by the
// CPU kernels (src/cpu/<op>/).
#include "ampkit/ops/kernel_info.hpp"
#include "ops/activation/activation_kernels.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/convert/convert_kernels.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/embedding/embedding_kernels.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/kernel_registry.hpp"
#include "ops/norm/norm_kernels.hpp"
#include "ops/optimizer/optimizer_kernels.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit {
namespace {

template <class Problem, class RunFn>
KernelList describe(const char* op, std::span<const ops::KernelEntry<Problem, RunFn>> list,
                    Device device = Device::cpu) {
  return {op, device, ops::kernel_availability(list)};
}

}  // namespace

std::vector<KernelList> kernel_lists() {
  return {
      describe("gemm", cpu::gemm_kernels()),
      describe("layer_norm_forward", cpu::layer_norm_fwd_kernels()),
      describe("layer_norm_backward", cpu::layer_norm_bwd_kernels()),
      describe("rms_norm_forward", cpu::rms_norm_fwd_kernels()),
      describe("rms_norm_backward", cpu::rms_norm_bwd_kernels()),
      describe("convert", cpu::convert_kernels()),
      describe("gelu", cpu::gelu_kernels()),
      describe("elementwise (add, add_accumulate, add_row_vector, scale)", cpu::elementwise_kernels()),
      describe("sum_rows", cpu::sum_rows_kernels()),
      describe("softmax_cross_entropy_forward", cpu::softmax_cross_entropy_forward_kernels()),
      describe("softmax_cross_entropy_backward", cpu::softmax_cross_entropy_backward_kernels()),
      describe("attention_forward", ops::attention_forward_kernels()),
      describe("attention_backward", ops::attention_backward_kernels()),
      describe("embedding_forward", cpu::embedding_forward_kernels()),
      describe("embedding_backward", cpu::embedding_backward_kernels()),
      describe("adamw_step", cpu::adamw_kernels()),
      describe("sgd_step", cpu::sgd_kernels()),
      describe("global_grad_norm", cpu::global_grad_norm_kernels()),
      describe("all_finite", cpu::all_finite_kernels()),
      describe("gemm", cuda::gemm_cuda_kernels(), Device::cuda),
      describe("layer_norm_forward", cuda::layer_norm_fwd_cuda_kernels(), Device::cuda),
      describe("layer_norm_backward", cuda::layer_norm_bwd_cuda_kernels(), Device::cuda),
      describe("rms_norm_forward", cuda::rms_norm_fwd_cuda_kernels(), Device::cuda),
      describe("rms_norm_backward", cuda::rms_norm_bwd_cuda_kernels(), Device::cuda),
      describe("convert", cuda::convert_cuda_kernels(), Device::cuda),
      describe("gelu", cuda::gelu_cuda_kernels(), Device::cuda),
      describe("elementwise (add, add_accumulate, add_row_vector, scale)", cuda::elementwise_cuda_kernels(),
               Device::cuda),
      describe("softmax_cross_entropy_forward", cuda::softmax_cross_entropy_forward_cuda_kernels(), Device::cuda),
      describe("softmax_cross_entropy_backward", cuda::softmax_cross_entropy_backward_cuda_kernels(), Device::cuda),
      describe("attention_forward", cuda::attention_forward_cuda_kernels(), Device::cuda),
      describe("attention_backward", cuda::attention_backward_cuda_kernels(), Device::cuda),
      describe("embedding_forward", cuda::embedding_forward_cuda_kernels(), Device::cuda),
      describe("embedding_backward", cuda::embedding_backward_cuda_kernels(), Device::cuda),
  };
}

}  // namespace ampkit
