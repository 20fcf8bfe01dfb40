// Bad calls of the training-graph ops with CUDA operands (tests/cuda/): without a GPU every op
// says why (unsupported); with one, operands on two devices and host memory behind a cuda view
// are rejected with messages naming the argument, and a rejected call writes nothing. Also the
// kernel names the CUDA lists give.
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

TensorView on(void* p, DType t, std::initializer_list<std::int64_t> shape, Device d) {
  return TensorView(p, t, shape, d);
}

}  // namespace

TEST(CudaGraphOpsBadInput, WithoutAGpuEveryOpSaysWhy) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a usable GPU";
  float host[64] = {};
  std::int32_t ids[4] = {};
  const Device c = Device::cuda;
  struct Case {
    const char* expect;
    std::string message;
    ErrorKind kind = ErrorKind::invalid_argument;
  };
  Case cases[7];
  cases[0].expect = "gelu_forward: x is in cuda:0 memory, but ";
  cases[0].message = error_of(
      [&] {
        gelu_forward(on(host, DType::f32, {2, 4}, c), on(host + 8, DType::f32, {2, 4}, c), GeluVariant::tanh);
      },
      &cases[0].kind);
  cases[1].expect = "add: a is in cuda:0 memory, but ";
  cases[1].message = error_of(
      [&] { add(on(host, DType::f32, {4}, c), on(host + 4, DType::f32, {4}, c), on(host + 8, DType::f32, {4}, c)); },
      &cases[1].kind);
  cases[2].expect = "convert: src is in cuda:0 memory, but ";
  cases[2].message =
      error_of([&] { convert(on(host, DType::f32, {4}, c), on(host + 8, DType::bf16, {4}, c)); }, &cases[2].kind);
  cases[3].expect = "embedding_forward: table is in cuda:0 memory, but ";
  cases[3].message = error_of(
      [&] {
        embedding_forward(on(ids, DType::i32, {4}, c), on(host, DType::f32, {2, 4}, c),
                          on(host + 8, DType::f32, {4, 4}, c));
      },
      &cases[3].kind);
  cases[4].expect = "embedding_backward: dtable is in cuda:0 memory, but ";
  cases[4].message = error_of(
      [&] {
        embedding_backward(on(ids, DType::i32, {4}, c), on(host, DType::f32, {4, 4}, c),
                           on(host + 16, DType::f32, {2, 4}, c), false);
      },
      &cases[4].kind);
  cases[5].expect = "softmax_cross_entropy_forward: logits is in cuda:0 memory, but ";
  cases[5].message = error_of(
      [&] {
        softmax_cross_entropy_forward(on(host, DType::f32, {4, 4}, c), on(ids, DType::i32, {4}, c),
                                      on(host + 16, DType::f32, {}, c), on(host + 20, DType::f32, {4}, c));
      },
      &cases[5].kind);
  cases[6].expect = "attention_forward: q is in cuda:0 memory, but ";
  cases[6].message = error_of(
      [&] {
        AttentionForwardArgs a;
        a.q = on(host, DType::f32, {1, 2, 4}, c);
        a.k = on(host + 8, DType::f32, {1, 2, 4}, c);
        a.v = on(host + 16, DType::f32, {1, 2, 4}, c);
        a.out = on(host + 24, DType::f32, {1, 2, 4}, c);
        a.lse = on(host + 32, DType::f32, {1, 1, 2}, c);
        attention_forward(a);
      },
      &cases[6].kind);
  for (const Case& k : cases)
    EXPECT_TRUE(contains(k.message, k.expect) && k.kind == ErrorKind::unsupported) << k.message;
}

TEST(CudaGraphOpsBadInput, MixedDevicesAndHostPointersAreRejected) {
  AMPKIT_REQUIRE_GPU();
  HostArray host(DType::f32, 64);
  for (std::int64_t i = 0; i < 64; ++i) host.set(i, 1.0f);
  HostArray ids(DType::i32, 4);
  DeviceArray x(host), y(host), d_ids(ids);
  auto* h = static_cast<float*>(host.data());
  const Device c = Device::cuda, cpu = Device::cpu;
  const std::string one_device = "every operand of one call must be on one device";

  // gelu: y on the cpu, x on cuda.
  std::string m = error_of([&] {
    gelu_forward(on(x.get(), DType::f32, {2, 4}, c), on(h, DType::f32, {2, 4}, cpu), GeluVariant::tanh);
  });
  EXPECT_TRUE(contains(m, "gelu_forward: y is in cpu memory, but x is in cuda:0 memory: " + one_device)) << m;
  // add: b on the cpu.
  m = error_of(
      [&] { add(on(x.get(), DType::f32, {8}, c), on(h, DType::f32, {8}, cpu), on(y.get(), DType::f32, {8}, c)); });
  EXPECT_TRUE(contains(m, "add: b is in cpu memory, but a is in cuda:0 memory: " + one_device)) << m;
  // convert: host memory behind a cuda view.
  m = error_of([&] { convert(on(x.get(), DType::f32, {8}, c), on(h + 16, DType::bf16, {8}, c)); });
  EXPECT_TRUE(contains(m, "convert: dst must point to device memory of cuda:0 (its view says so), but it points to "))
      << m;
  // embedding: ids on the cpu.
  m = error_of([&] {
    embedding_forward(on(ids.data(), DType::i32, {4}, cpu), on(x.get(), DType::f32, {2, 4}, c),
                      on(y.get(), DType::f32, {4, 4}, c));
  });
  EXPECT_TRUE(contains(m, "embedding_forward: ids is in cpu memory, but table is in cuda:0 memory: " + one_device))
      << m;
  // embedding: an id out of range in device memory is found before anything runs.
  HostArray bad_ids(DType::i32, 4);
  static_cast<std::int32_t*>(bad_ids.data())[2] = 9;
  DeviceArray d_bad(bad_ids);
  HostArray before = y.to_host(DType::f32);
  m = error_of([&] {
    embedding_forward(on(d_bad.get(), DType::i32, {4}, c), on(x.get(), DType::f32, {2, 4}, c),
                      on(y.get(), DType::f32, {4, 4}, c));
  });
  EXPECT_TRUE(contains(m, "embedding_forward: ids[2] = 9 is out of range [0, 2)")) << m;
  EXPECT_TRUE(y.to_host(DType::f32).bytes == before.bytes) << "a rejected embedding_forward wrote its output";
  // softmax cross-entropy: lse on the cpu.
  m = error_of([&] {
    softmax_cross_entropy_forward(on(x.get(), DType::f32, {4, 4}, c), on(d_ids.get(), DType::i32, {4}, c),
                                  on(y.get(), DType::f32, {}, c), on(h, DType::f32, {4}, cpu));
  });
  EXPECT_TRUE(
      contains(m, "softmax_cross_entropy_forward: lse is in cpu memory, but logits is in cuda:0 memory: " + one_device))
      << m;
  // attention: out on the cpu.
  m = error_of([&] {
    AttentionForwardArgs a;
    a.q = on(x.get(), DType::f32, {1, 2, 4}, c);
    a.k = a.q;
    a.v = a.q;
    a.out = on(h, DType::f32, {1, 2, 4}, cpu);
    a.lse = on(y.get(), DType::f32, {1, 1, 2}, c);
    attention_forward(a);
  });
  EXPECT_TRUE(contains(m, "attention_forward: out is in cpu memory, but q is in cuda:0 memory: " + one_device)) << m;

  // The CUDA lists' kernel names.
  EXPECT_EQ(std::string(gelu_forward_kernel_name(on(x.get(), DType::f32, {2, 4}, c), on(y.get(), DType::f32, {2, 4}, c),
                                                 GeluVariant::tanh)),
            std::string("gelu_cuda"));
  EXPECT_EQ(std::string(convert_kernel_name(on(x.get(), DType::f32, {8}, c), on(y.get(), DType::bf16, {8}, c))),
            std::string("convert_cuda"));
}

}  // namespace ampkit::cuda_test
