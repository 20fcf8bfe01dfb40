// The CUDA entry points of a build without the CUDA backend (device layer; compiled instead of
// src/cuda/ when AMPKIT_CUDA is off or nvcc was not found). Every query says why CUDA cannot run,
// every action throws unsupported, and each CUDA kernel list holds one entry that never runs.
#include <string>

#include "ampkit/core/error.hpp"
#include "ops/activation/activation_kernels.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/convert/convert_kernels.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/embedding/embedding_kernels.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/norm/norm_kernels.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit {
namespace {

constexpr const char* kNoBackend =
    "this build has no CUDA backend (configure with -DAMPKIT_CUDA=ON on a machine with nvcc)";

[[noreturn]] void no_backend(const char* fn) { fail_with(ErrorKind::unsupported, fn, kNoBackend); }

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

void never_gemm(const ops::GemmProblem&, ops::GemmCounters&) { no_backend("gemm"); }
void never_fwd(const ops::NormForwardProblem&) { no_backend("norm"); }
void never_bwd(const ops::NormBackwardProblem&) { no_backend("norm"); }

void never_gelu(const ops::GeluProblem&) { no_backend("gelu"); }
void never_elementwise(const ops::ElementwiseProblem&) { no_backend("elementwise"); }
void never_embedding_fwd(const ops::EmbeddingForwardProblem&) { no_backend("embedding_forward"); }
void never_embedding_bwd(const ops::EmbeddingBackwardProblem&) { no_backend("embedding_backward"); }
void never_sce(const ops::SoftmaxCrossEntropyProblem&) { no_backend("softmax_cross_entropy"); }
void never_convert(const void*, DType, void*, DType, std::int64_t) { no_backend("convert"); }
void never_attention_fwd(const ops::AttentionForwardProblem&) { no_backend("attention_forward"); }
void never_attention_bwd(const ops::AttentionBackwardProblem&) { no_backend("attention_backward"); }

constexpr ops::GeluEntry kGelu[] = {{"gelu_cuda", kCuda, nullptr, never_gelu}};
constexpr ops::ElementwiseEntry kElementwise[] = {{"elementwise_cuda", kCuda, nullptr, never_elementwise}};
constexpr ops::EmbeddingForwardEntry kEmbeddingFwd[] = {{"embedding_fwd_cuda", kCuda, nullptr, never_embedding_fwd}};
constexpr ops::EmbeddingBackwardEntry kEmbeddingBwd[] = {{"embedding_bwd_cuda", kCuda, nullptr, never_embedding_bwd}};
constexpr ops::SoftmaxCrossEntropyEntry kSceFwd[] = {{"softmax_cross_entropy_fwd_cuda", kCuda, nullptr, never_sce}};
constexpr ops::SoftmaxCrossEntropyEntry kSceBwd[] = {{"softmax_cross_entropy_bwd_cuda", kCuda, nullptr, never_sce}};
constexpr ops::ConvertEntry kConvert[] = {{"convert_cuda", kCuda, nullptr, never_convert}};
constexpr ops::AttentionForwardEntry kAttentionFwd[] = {{"attention_fwd_cuda", kCuda, nullptr, never_attention_fwd}};
constexpr ops::AttentionBackwardEntry kAttentionBwd[] = {{"attention_bwd_cuda", kCuda, nullptr, never_attention_bwd}};

constexpr ops::GemmKernel kGemm[] = {{"gemm_cublaslt_cuda", kCuda, nullptr, never_gemm}};
constexpr ops::NormForwardEntry kLayerFwd[] = {{"layer_norm_fwd_cuda", kCuda, nullptr, never_fwd}};
constexpr ops::NormBackwardEntry kLayerBwd[] = {{"layer_norm_bwd_cuda", kCuda, nullptr, never_bwd}};
constexpr ops::NormForwardEntry kRmsFwd[] = {{"rms_norm_fwd_cuda", kCuda, nullptr, never_fwd}};
constexpr ops::NormBackwardEntry kRmsBwd[] = {{"rms_norm_bwd_cuda", kCuda, nullptr, never_bwd}};

}  // namespace

namespace cuda {
std::span<const ops::GemmKernel> gemm_cuda_kernels() { return kGemm; }
std::span<const ops::NormForwardEntry> layer_norm_fwd_cuda_kernels() { return kLayerFwd; }
std::span<const ops::NormBackwardEntry> layer_norm_bwd_cuda_kernels() { return kLayerBwd; }
std::span<const ops::NormForwardEntry> rms_norm_fwd_cuda_kernels() { return kRmsFwd; }
std::span<const ops::NormBackwardEntry> rms_norm_bwd_cuda_kernels() { return kRmsBwd; }
std::span<const ops::GeluEntry> gelu_cuda_kernels() { return kGelu; }
std::span<const ops::ElementwiseEntry> elementwise_cuda_kernels() { return kElementwise; }
std::span<const ops::EmbeddingForwardEntry> embedding_forward_cuda_kernels() { return kEmbeddingFwd; }
std::span<const ops::EmbeddingBackwardEntry> embedding_backward_cuda_kernels() { return kEmbeddingBwd; }
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_cuda_kernels() { return kSceFwd; }
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_cuda_kernels() { return kSceBwd; }
std::span<const ops::ConvertEntry> convert_cuda_kernels() { return kConvert; }
void convert_cuda(const ops::ConvertProblem&) { no_backend("convert"); }
std::span<const ops::AttentionForwardEntry> attention_forward_cuda_kernels() { return kAttentionFwd; }
std::span<const ops::AttentionBackwardEntry> attention_backward_cuda_kernels() { return kAttentionBwd; }
}  // namespace cuda

}  // namespace ampkit
