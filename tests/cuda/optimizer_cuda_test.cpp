// The multi-tensor step on the GPU against the cpu (tests/cuda/): the same parameters, gradients
// and state in host memory and in device memory, the same MultiTensorStep calls on both devices,
// and every output compared bit for bit — AdamW and SGD at edge sizes (0, 1, 4095, 4096, 4097
// elements and many small tensors; f32, bf16 and f16 gradients; compute copies), the gradient
// norm against global_grad_norm, accumulation over micro-batches, clipping, an injected Inf
// (skip, loss scale halved, step count kept), growth after the interval, a step outside the
// AdamW window; and the CUDA list's reference entry against the cpu reference entry.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

DType grad_dtype_of(std::size_t i) {
  const DType kinds[] = {DType::f32, DType::bf16, DType::f16};
  return kinds[i % 3];
}

// One parameter's tensors on one device: param, grad, m, v, copy (bf16, every 4th), source and
// acc (with accumulation).
struct Tensors {
  std::int64_t n = 0;
  HostArray param, grad, m, v, copy, source, acc;
  bool has_source = false;
};

// Random tensors of the given sizes (grads of mixed dtypes; v >= 0).
std::vector<Tensors> random_tensors(const std::vector<std::int64_t>& sizes, std::uint64_t seed, bool accumulation) {
  std::mt19937_64 rng(seed);
  std::vector<Tensors> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Tensors t;
    t.n = sizes[i];
    t.param = HostArray(DType::f32, t.n);
    t.grad = HostArray(accumulation ? DType::f32 : grad_dtype_of(i), t.n);
    t.m = HostArray(DType::f32, t.n);
    t.v = HostArray(DType::f32, t.n);
    fill_random(t.param, rng);
    fill_random(t.grad, rng, -0.5f, 0.5f);
    fill_random(t.m, rng, -0.1f, 0.1f);
    fill_random(t.v, rng, 0.0f, 0.01f);
    if (i % 4 == 1) t.copy = HostArray(DType::bf16, t.n);
    if (accumulation) {
      t.has_source = true;
      t.source = HostArray(grad_dtype_of(i), t.n);
      t.acc = t.grad;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The same tensors in device memory.
struct DeviceTensors {
  DeviceArray param, grad, m, v, copy, source;
  explicit DeviceTensors(const Tensors& t)
      : param(t.param), grad(t.grad), m(t.m), v(t.v), copy(t.copy), source(t.source) {}
};

TensorView view(const void* data, DType t, const std::int64_t& n, Device d) { return TensorView(data, t, &n, 1, d); }

// The step's parameter list over host tensors (device == cpu) or their device copies. With
// `sgd_plain`, no m or v (SGD without momentum).
std::vector<MultiTensorParam> params_of(std::vector<Tensors>& host, std::vector<DeviceTensors>* dev, bool sgd_plain) {
  std::vector<MultiTensorParam> out;
  for (std::size_t i = 0; i < host.size(); ++i) {
    Tensors& t = host[i];
    const Device d = dev != nullptr ? Device::cuda : Device::cpu;
    auto ptr = [&](HostArray& h, DeviceArray DeviceTensors::*member) -> void* {
      return dev != nullptr ? ((*dev)[i].*member).get() : h.data();
    };
    MultiTensorParam p;
    p.param = view(ptr(t.param, &DeviceTensors::param), DType::f32, t.n, d);
    p.grad = view(ptr(t.grad, &DeviceTensors::grad), t.grad.t, t.n, d);
    if (!sgd_plain) {
      p.m = view(ptr(t.m, &DeviceTensors::m), DType::f32, t.n, d);
      p.v = view(ptr(t.v, &DeviceTensors::v), DType::f32, t.n, d);
    }
    if (i % 4 == 1) p.param_copy = view(ptr(t.copy, &DeviceTensors::copy), DType::bf16, t.n, d);
    if (t.has_source) {
      p.source = view(ptr(t.source, &DeviceTensors::source), t.source.t, t.n, d);
      p.acc = p.grad;
    }
    p.decay = i % 3 != 2;
    out.push_back(p);
  }
  return out;
}

std::vector<std::int64_t> edge_sizes() {
  std::vector<std::int64_t> s = {0, 1, 4095, 4096, 4097, 3, 12289};
  for (int i = 0; i < 40; ++i) s.push_back(1 + (i * 37) % 300);
  return s;
}

bool same_bits(const HostArray& a, const HostArray& b) {
  return a.bytes.size() == b.bytes.size() && std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) == 0;
}

// Every tensor of `dev` equals its host twin bit for bit.
void expect_same(const std::vector<Tensors>& host, const std::vector<DeviceTensors>& dev, const std::string& what) {
  for (std::size_t i = 0; i < host.size(); ++i) {
    const Tensors& h = host[i];
    const std::string at = what + " tensor " + std::to_string(i) + " (" + std::to_string(h.n) + " elements)";
    EXPECT_TRUE(same_bits(dev[i].param.to_host(DType::f32), h.param)) << at << " param";
    EXPECT_TRUE(same_bits(dev[i].grad.to_host(h.grad.t), h.grad)) << at << " grad";
    EXPECT_TRUE(same_bits(dev[i].m.to_host(DType::f32), h.m)) << at << " m";
    EXPECT_TRUE(same_bits(dev[i].v.to_host(DType::f32), h.v)) << at << " v";
    EXPECT_TRUE(same_bits(dev[i].copy.to_host(DType::bf16), h.copy)) << at << " copy";
  }
}

void expect_same(const StepScalars& cpu, const StepScalars& gpu, const std::string& what) {
  EXPECT_TRUE(std::memcmp(&cpu.grad_norm, &gpu.grad_norm, sizeof(double)) == 0)
      << what << " grad_norm " << cpu.grad_norm << " vs " << gpu.grad_norm;
  EXPECT_TRUE(std::memcmp(&cpu.loss_sum, &gpu.loss_sum, sizeof(double)) == 0) << what << " loss_sum";
  EXPECT_TRUE(cpu.grad_scale == gpu.grad_scale) << what << " grad_scale " << cpu.grad_scale << " vs " << gpu.grad_scale;
  EXPECT_TRUE(cpu.loss_scale == gpu.loss_scale && cpu.seed == gpu.seed && cpu.used_seed == gpu.used_seed)
      << what << " loss scale " << cpu.loss_scale << " vs " << gpu.loss_scale;
  EXPECT_EQ(cpu.skip, gpu.skip);
  EXPECT_EQ(cpu.window_miss, gpu.window_miss);
  EXPECT_EQ(cpu.good_steps, gpu.good_steps);
  EXPECT_EQ(cpu.skipped_steps, gpu.skipped_steps);
  EXPECT_EQ(cpu.steps, gpu.steps);
}

// Both devices' steps over twins of the same tensors.
struct Twin {
  std::vector<Tensors> host;
  std::vector<DeviceTensors> dev;
  MultiTensorStep cpu, gpu;
  Twin(std::vector<Tensors> h, const StepRule& rule, bool sgd_plain, float scale)
      : host(std::move(h)),
        dev(make_dev(host)),
        cpu(params_of(host, nullptr, sgd_plain), rule, Device::cpu, 0, scale),
        gpu(params_of(host, &dev, sgd_plain), rule, Device::cuda, 0, scale) {}
  static std::vector<DeviceTensors> make_dev(const std::vector<Tensors>& h) {
    std::vector<DeviceTensors> d;
    for (const Tensors& t : h) d.emplace_back(t);
    return d;
  }
  void check(const std::string& what) {
    cuda_synchronize();
    expect_same(host, dev, what);
    expect_same(cpu.read(), gpu.read(), what);
  }
};

TEST(MultiTensorStepCuda, AdamWMatchesTheCpuBitForBit) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (double clip : {0.0, 1.0}) {
    StepRule rule;
    rule.clip_norm = clip;
    rule.divisor = 3.0;
    Twin t(random_tensors(edge_sizes(), seed, false), rule, false, 1.0f);
    EXPECT_EQ(std::string(t.gpu.kernel_name()), std::string("multi_tensor_step_cuda"));
    for (int step = 1; step <= 3; ++step) {
      MultiAdamWArgs a;
      a.lr = 1e-3f * static_cast<float>(step);
      a.weight_decay = 0.1f;
      a.step_base = step - 1 > 0 ? step - 1 : 1;  // the count is inside the window, not at its start
      for (MultiTensorStep* s : {&t.cpu, &t.gpu}) {
        s->decide();
        s->adamw(a);
      }
      t.check("seed " + std::to_string(seed) + " clip " + std::to_string(clip) + " step " + std::to_string(step));
    }
    EXPECT_EQ(t.gpu.read().steps, 3);
    EXPECT_TRUE(clip == 0.0 || t.gpu.read().grad_scale < 1.0f / 3.0f);  // the norm of ~5e4 elements > 1: clipped
  }
}

TEST(MultiTensorStepCuda, SgdMatchesTheCpuBitForBit) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (float momentum : {0.0f, 0.9f}) {
    Twin t(random_tensors(edge_sizes(), seed, false), StepRule{}, momentum == 0.0f, 1.0f);
    for (int step = 1; step <= 3; ++step) {
      MultiSgdArgs a{0.03f, momentum, 0.1f};
      for (MultiTensorStep* s : {&t.cpu, &t.gpu}) {
        s->decide();
        s->sgd(a);
      }
      t.check("seed " + std::to_string(seed) + " momentum " + std::to_string(momentum));
    }
  }
}

TEST(MultiTensorStepCuda, NormIsGlobalGradNormsBits) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::vector<std::int64_t> sizes = edge_sizes();
  sizes.push_back(3 * 4096 * 70 + 5);  // 211 chunks: several blocks of the partials kernel
  Twin t(random_tensors(sizes, seed, false), StepRule{}, false, 1.0f);
  std::vector<TensorView> views;
  for (const Tensors& h : t.host) views.push_back(view(h.grad.data(), h.grad.t, h.n, Device::cpu));
  const double want = global_grad_norm(views);
  t.gpu.decide();
  const double got = t.gpu.read().grad_norm;
  EXPECT_TRUE(std::memcmp(&want, &got, sizeof want) == 0) << "seed " << seed << ": " << want << " vs " << got;
  // No parameters: the norm is 0 and the step is taken.
  MultiTensorStep empty({}, StepRule{}, Device::cuda);
  empty.decide();
  EXPECT_TRUE(empty.read().grad_norm == 0.0 && empty.read().skip == 0 && empty.read().steps == 1);
}

TEST(MultiTensorStepCuda, AccumulationMatchesTheCpu) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  StepRule rule;
  rule.divisor = 3.0;
  Twin t(random_tensors(edge_sizes(), seed, true), rule, false, 1.0f);
  std::mt19937_64 rng(seed + 1);
  DeviceArray loss_dev(sizeof(float), 0);
  for (int micro = 0; micro < 3; ++micro) {
    for (std::size_t i = 0; i < t.host.size(); ++i) {
      fill_random(t.host[i].source, rng);
      cuda_copy_to_device(t.dev[i].source.get(), t.host[i].source.data(), t.host[i].source.bytes.size());
    }
    float loss = 2.0f + 0.1f * static_cast<float>(micro);
    cuda_copy_to_device(loss_dev.get(), &loss, sizeof loss);
    t.cpu.accumulate(micro == 0, &loss);
    t.gpu.accumulate(micro == 0, static_cast<const float*>(loss_dev.get()));
    cuda_synchronize();
    t.check("seed " + std::to_string(seed) + " micro " + std::to_string(micro));
  }
  for (MultiTensorStep* s : {&t.cpu, &t.gpu}) {
    s->decide();
    s->adamw(MultiAdamWArgs{});
  }
  t.check("seed " + std::to_string(seed) + " after the update");
}

TEST(MultiTensorStepCuda, InfSkipsHalvesTheScaleAndGrowsAfterTheInterval) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  StepRule rule;
  rule.loss_scaling = true;
  rule.growth_interval = 2;
  std::vector<Tensors> host = random_tensors(edge_sizes(), seed, false);
  host[4].grad.set(4096, std::numeric_limits<float>::infinity());  // in the second chunk of a bf16 grad
  Twin t(std::move(host), rule, false, 1024.0f);
  const HostArray before = t.host[0].param;
  auto step = [&](std::int64_t base) {
    for (MultiTensorStep* s : {&t.cpu, &t.gpu}) {
      s->decide();
      s->adamw(MultiAdamWArgs{1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, base});
    }
  };
  step(1);
  t.check("seed " + std::to_string(seed) + " the Inf step");
  StepScalars s = t.gpu.read();
  EXPECT_TRUE(s.skip == 1 && s.steps == 0 && s.skipped_steps == 1 && s.good_steps == 0);
  EXPECT_TRUE(s.loss_scale == 512.0f && s.seed == 512.0f && s.used_seed == 1024.0f) << s.loss_scale;
  EXPECT_TRUE(std::isinf(s.grad_norm));
  EXPECT_TRUE(same_bits(t.dev[0].param.to_host(DType::f32), before));  // not updated
  // Finite again: two good steps grow the scale back to 1024.
  std::mt19937_64 rng(seed + 1);
  for (Tensors& h : t.host) fill_random(h.grad, rng);
  for (std::size_t i = 0; i < t.host.size(); ++i)
    cuda_copy_to_device(t.dev[i].grad.get(), t.host[i].grad.data(), t.host[i].grad.bytes.size());
  step(1);
  t.check("seed " + std::to_string(seed) + " first good step");
  EXPECT_TRUE(t.gpu.read().loss_scale == 512.0f && t.gpu.read().good_steps == 1 && t.gpu.read().steps == 1);
  step(1);
  t.check("seed " + std::to_string(seed) + " second good step");
  s = t.gpu.read();
  EXPECT_TRUE(s.loss_scale == 1024.0f && s.good_steps == 0 && s.steps == 2 && s.skip == 0) << s.loss_scale;
  // A step count outside the window: window_miss, nothing written.
  const HostArray kept = t.dev[0].param.to_host(DType::f32);
  step(10);
  t.check("seed " + std::to_string(seed) + " outside the window");
  EXPECT_EQ(t.gpu.read().window_miss, 1);
  EXPECT_TRUE(same_bits(t.dev[0].param.to_host(DType::f32), kept));
}

TEST(MultiTensorStepCuda, ReferenceEntryIsTheCpuReference) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  ReferenceOnly reference;
  StepRule rule;
  rule.clip_norm = 0.5;
  Twin t(random_tensors(edge_sizes(), seed, true), rule, false, 1.0f);
  EXPECT_EQ(std::string(t.gpu.kernel_name()), std::string("multi_tensor_step_ref_cuda"));
  EXPECT_EQ(std::string(t.cpu.kernel_name()), std::string("multi_tensor_step_reference"));
  t.cpu.accumulate(true, nullptr);
  t.gpu.accumulate(true, nullptr);
  for (MultiTensorStep* s : {&t.cpu, &t.gpu}) {
    s->decide();
    s->adamw(MultiAdamWArgs{});
    s->decide();
    s->sgd(MultiSgdArgs{0.01f, 0.9f, 0.0f});
  }
  t.check("seed " + std::to_string(seed) + " reference");
}

TEST(MultiTensorStepCuda, BadInputNamesTheParameter) {
  AMPKIT_REQUIRE_GPU();
  std::vector<Tensors> host = random_tensors({5, 6}, 1, false);
  std::vector<MultiTensorParam> p = params_of(host, nullptr, false);  // host memory
  const std::string msg = error_of([&] { MultiTensorStep s(p, StepRule{}, Device::cuda); });
  EXPECT_TRUE(contains(msg, "params[0].param")) << msg;
}

}  // namespace
}  // namespace ampkit::cuda_test
