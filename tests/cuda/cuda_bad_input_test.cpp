// Bad calls with CUDA operands (tests/cuda/): without a GPU every call says why (unsupported);
// with one, host memory behind a cuda view or GemmArgs::device, operands on two devices and a
// device index with no GPU are rejected with messages naming the argument, and a rejected call
// writes nothing. Also the kernel names the CUDA lists give.
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

GemmArgs small_gemm(void* a, void* b, void* d) {
  GemmArgs g;
  g.m = g.n = g.k = 4;
  g.lda = g.ldb = g.ldd = 4;
  g.a = a;
  g.b = b;
  g.d = d;
  g.device = Device::cuda;
  return g;
}

}  // namespace

TEST(CudaBadInput, WithoutAGpuEveryCallSaysWhy) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a usable GPU";
  float host[16] = {};
  ErrorKind kind = ErrorKind::invalid_argument;
  const std::string g = error_of([&] { gemm(small_gemm(host, host + 4, host + 8)); }, &kind);
  EXPECT_TRUE(contains(g, "gemm: device is cuda:0, but ") && kind == ErrorKind::unsupported) << g;
  EXPECT_TRUE(contains(gemm_check(small_gemm(host, host + 4, host + 8)), "device is cuda:0")) << "gemm_check";
  NormForwardArgs f;
  f.x = TensorView(host, DType::f32, {2, 4}, Device::cuda);
  f.y = TensorView(host + 8, DType::f32, {2, 4}, Device::cuda);
  const std::string n = error_of([&] { layer_norm_forward(f); }, &kind);
  EXPECT_TRUE(contains(n, "layer_norm_forward: x is in cuda:0 memory, but ") && kind == ErrorKind::unsupported) << n;
  EXPECT_TRUE(cuda_unavailable_reason() != "") << "no reason given";
}

TEST(CudaBadInput, GemmRejectsHostMemoryAndBadDevices) {
  AMPKIT_REQUIRE_GPU();
  HostArray host(DType::f32, 16);
  DeviceArray a(HostArray(DType::f32, 16)), b(HostArray(DType::f32, 16)), d(64, 0x11);
  ErrorKind kind = ErrorKind::internal;
  std::string m = error_of([&] { gemm(small_gemm(host.data(), b.get(), d.get())); }, &kind);
  EXPECT_TRUE(contains(m, "gemm: a must be device memory of cuda:0 (args.device), but it is host memory") &&
              kind == ErrorKind::invalid_argument)
      << m;
  m = error_of([&] { gemm(small_gemm(a.get(), b.get(), host.data())); });
  EXPECT_TRUE(contains(m, "gemm: d must be device memory of cuda:0")) << m;
  GemmArgs bad_index = small_gemm(a.get(), b.get(), d.get());
  bad_index.device_index = 99;
  m = error_of([&] { gemm(bad_index); });
  EXPECT_TRUE(contains(m, "device_index must name one of this machine's")) << m;
  // A rejected call writes nothing.
  GemmArgs bad_ld = small_gemm(a.get(), b.get(), d.get());
  bad_ld.lda = 2;
  m = error_of([&] { gemm(bad_ld); });
  EXPECT_TRUE(contains(m, "gemm: lda (2) must be >= max(1, m) (4)")) << m;
  const HostArray after = d.to_host(DType::f32);
  for (std::int64_t i = 0; i < 16; ++i)
    EXPECT_TRUE(after.bytes[static_cast<std::size_t>(i)] == 0x11) << "D was written";
  EXPECT_TRUE(std::string(gemm_kernel_name(small_gemm(a.get(), b.get(), d.get()))) == "gemm_cublaslt_fused_cuda");
  GemmArgs erf = small_gemm(a.get(), b.get(), d.get());
  erf.epilogue.kind = Epilogue::GELU;
  erf.epilogue.gelu = GeluVariant::erf;
  EXPECT_TRUE(std::string(gemm_kernel_name(erf)) == "gemm_cublaslt_epilogue_cuda") << gemm_kernel_name(erf);
}

TEST(CudaBadInput, NormRejectsMixedDevicesAndHostPointers) {
  AMPKIT_REQUIRE_GPU();
  HostArray host(DType::f32, 8);
  DeviceArray x(HostArray(DType::f32, 8)), y(32, 0x22);
  NormForwardArgs f;
  f.x = TensorView(x.get(), DType::f32, {2, 4}, Device::cuda);
  f.y = TensorView(host.data(), DType::f32, {2, 4});
  ErrorKind kind = ErrorKind::internal;
  std::string m = error_of([&] { layer_norm_forward(f); }, &kind);
  EXPECT_TRUE(contains(m,
                       "layer_norm_forward: y is in cpu memory, but x is in cuda:0 memory: every operand of one call "
                       "must be on one device") &&
              kind == ErrorKind::invalid_argument)
      << m;
  f.y = TensorView(host.data(), DType::f32, {2, 4}, Device::cuda);
  m = error_of([&] { layer_norm_forward(f); });
  EXPECT_TRUE(contains(m, "y must point to device memory of cuda:0 (its view says so), but it points to host memory"))
      << m;
  f.y = TensorView(y.get(), DType::f32, {2, 4}, Device::cuda);
  f.y.device_index = 5;
  m = error_of([&] { layer_norm_forward(f); });
  EXPECT_TRUE(contains(m, "y is on cuda:5, but this machine has")) << m;
  f.y.device_index = 0;
  EXPECT_TRUE(std::string(norm_kernel_name(NormKind::layer, f)) == "layer_norm_fwd_cuda")
      << norm_kernel_name(NormKind::layer, f);
  const HostArray after = y.to_host(DType::f32);
  for (std::size_t i = 0; i < after.bytes.size(); ++i) EXPECT_TRUE(after.bytes[i] == 0x22) << "y was written";
}

}  // namespace ampkit::cuda_test
