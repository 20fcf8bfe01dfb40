// The trainer with the graph on the GPU (tests/cuda/): a tiny GPT trained for 5 steps on the cpu
// and on cuda from the same parameters and batches, in f32, bf16 and f16 compute; the losses
// must agree within tolerances derived from tests/graph/gpt_trajectory_test.cpp's, and two
// cuda runs must give the same losses, gradient norms and parameters bit for bit. Without a GPU,
// asking for one is an Error that says why.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/train/trainer.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

train::GptConfig tiny_gpt() {
  train::GptConfig c;
  c.vocab = 7;
  c.seq_len = 4;
  c.dim = 8;
  c.heads = 2;
  c.layers = 1;
  c.mlp_hidden = 16;
  return c;
}

struct Run {
  std::vector<double> loss, grad_norm;
  std::vector<float> params;  // every parameter after the last step, in model order
};

// 5 SGD steps (lr 0.03, momentum 0.9, weight decay 0.1, the trajectory test's settings) from the
// trainer's weights scaled by 20 (scores and logits of order 1; gains and biases as initialized)
// on batches drawn from `seed`. fp16 starts at loss scale 256: no step near the f16 overflow,
// where the two devices could skip different steps.
Run train(Device device, DType compute, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const train::GptConfig c = tiny_gpt();
  train::TrainerConfig tc;
  tc.batch = 3;
  tc.compute = compute;
  tc.optimizer.kind = train::OptimizerKind::sgd;
  tc.optimizer.lr = 0.03f;
  tc.optimizer.momentum = 0.9f;
  tc.optimizer.weight_decay = 0.1f;
  tc.seed = rng();
  tc.loss_scale.initial_scale = 256.0f;
  tc.device = device;
  train::Trainer t = train::Trainer::gpt(c, tc);
  for (const train::NamedTensor& n : t.tensors()) {
    if (n.name.find(':') != std::string::npos || n.name.ends_with(".g") || n.name.ends_with(".b")) continue;
    std::vector<float> v(n.data, n.data + n.numel());
    for (float& x : v) x *= 20.0f;
    t.set_tensor(n.name, v);
  }
  std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(c.vocab - 1));
  Run run;
  for (int s = 0; s < 5; ++s) {
    std::vector<std::int32_t> ids(12), y(12);
    for (auto& x : ids) x = id(rng);
    for (auto& x : y) x = id(rng);
    const train::StepResult r = t.step(ids, y);
    run.loss.push_back(r.loss);
    run.grad_norm.push_back(r.grad_norm);
  }
  for (const train::NamedTensor& n : t.tensors())
    if (n.name.find(':') == std::string::npos) run.params.insert(run.params.end(), n.data, n.data + n.numel());
  return run;
}

// Relative loss tolerance of cpu against cuda: each side follows the double reference within
// gpt_trajectory_test's bounds (f32: 1e-5 of the loss, ~200 u of ~12 ops each rounding once;
// bf16: 0.05, ~12 roundings of ~2 u = 2^-8 each), so the two within twice that. f16 (u = 2^-11)
// takes the bf16 bound scaled by 2^-3: 0.0125. Loss scaling only multiplies the gradients by
// powers of two.
double loss_tolerance(DType compute) { return compute == DType::f32 ? 2e-5 : compute == DType::bf16 ? 0.1 : 0.025; }

void expect_cuda_follows_cpu(DType compute) {
  const std::uint64_t seed = test_seed();
  const std::string where = std::string(dtype_name(compute)) + " seed=" + std::to_string(seed);
  const Run cpu = train(Device::cpu, compute, seed);
  const Run gpu = train(Device::cuda, compute, seed);
  const Run again = train(Device::cuda, compute, seed);
  for (std::size_t s = 0; s < cpu.loss.size(); ++s) {
    const double tol = loss_tolerance(compute) * std::fabs(cpu.loss[s]);
    EXPECT_TRUE(std::fabs(gpu.loss[s] - cpu.loss[s]) <= tol)
        << where << " step " << s << ": loss " << gpu.loss[s] << " on cuda, " << cpu.loss[s]
        << " on the cpu (tolerance " << tol << ")";
    EXPECT_TRUE(std::memcmp(&gpu.loss[s], &again.loss[s], sizeof(double)) == 0 &&
                std::memcmp(&gpu.grad_norm[s], &again.grad_norm[s], sizeof(double)) == 0)
        << where << " step " << s << ": two cuda runs differ (loss " << gpu.loss[s] << " vs " << again.loss[s] << ")";
  }
  EXPECT_TRUE(gpu.params.size() == again.params.size() &&
              std::memcmp(gpu.params.data(), again.params.data(), gpu.params.size() * sizeof(float)) == 0)
      << where << ": two cuda runs end with different parameters";
}

}  // namespace

TEST(CudaTrainer, F32FollowsTheCpu) {
  AMPKIT_REQUIRE_GPU();
  expect_cuda_follows_cpu(DType::f32);
}

TEST(CudaTrainer, Bf16FollowsTheCpu) {
  AMPKIT_REQUIRE_GPU();
  expect_cuda_follows_cpu(DType::bf16);
}

TEST(CudaTrainer, F16FollowsTheCpu) {
  AMPKIT_REQUIRE_GPU();
  expect_cuda_follows_cpu(DType::f16);
}

// The MI200 model: forward GEMM nodes flush f16 subnormals, tagged backward ones take the alt
// path (bf16-rounded operands), per node, on both devices (DESIGN.md section 6).
TEST(CudaTrainer, F16Mi200PolicyFollowsTheCpu) {
  AMPKIT_REQUIRE_GPU();
  struct Mi200 {
    Mi200() { set_fp16_device_model(Fp16DeviceModel::mi200); }
    ~Mi200() { clear_fp16_device_model(); }
  } model;
  expect_cuda_follows_cpu(DType::f16);
}

// The state on the device: AdamW, f16 with dynamic loss scaling (a start at 2^24 overflows, so
// the first steps are skipped and the scale backs off on the device), 2 micro-batches and
// clipping. Reading every tensor after each step (a checkpoint's download) and writing one back
// (a restore's upload) must not change a bit of the run; a trainer restored from those tensors,
// the step count and the loss-scale state continues like the original. In bf16 (no overflow
// near a skip boundary) the same AdamW run on the cpu follows within loss_tolerance.
TEST(CudaTrainer, DeviceStateSurvivesCheckpointsAndFollowsTheCpu) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const train::GptConfig c = tiny_gpt();
  auto make = [&](Device device, DType compute = DType::f16) {
    train::TrainerConfig tc;
    tc.batch = 3;
    tc.micro_batches = 2;
    tc.compute = compute;
    tc.clip_norm = 0.5f;
    tc.optimizer.lr = 1e-2f;
    tc.optimizer.weight_decay = 0.1f;
    tc.loss_scale.initial_scale = 0x1p24f;
    tc.loss_scale.growth_interval = 2;
    tc.seed = seed;
    tc.device = device;
    return train::Trainer::gpt(c, tc);
  };
  train::Trainer plain = make(Device::cuda), probed = make(Device::cuda);
  train::Trainer cpu = make(Device::cpu, DType::bf16), gpu = make(Device::cuda, DType::bf16);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(c.vocab - 1));
  int skipped = 0;
  for (int step = 0; step < 8; ++step) {
    std::vector<std::int32_t> ids(24), y(24);
    for (auto& x : ids) x = id(rng);
    for (auto& x : y) x = id(rng);
    const train::StepResult a = plain.step(ids, y), b = probed.step(ids, y), h = cpu.step(ids, y), g = gpu.step(ids, y);
    skipped += a.skipped;
    EXPECT_TRUE(std::memcmp(&a.loss, &b.loss, sizeof(double)) == 0 &&
                std::memcmp(&a.grad_norm, &b.grad_norm, sizeof(double)) == 0 && a.skipped == b.skipped &&
                a.loss_scale == b.loss_scale)
        << "seed " << seed << " step " << step << ": reading the tensors changed the run";
    EXPECT_TRUE(std::fabs(g.loss - h.loss) <= loss_tolerance(DType::bf16) * std::fabs(h.loss) && !g.skipped &&
                !h.skipped)
        << "seed " << seed << " step " << step << ": bf16 loss " << g.loss << " on cuda, " << h.loss << " on the cpu";
    std::vector<train::NamedTensor> t = probed.tensors();
    std::vector<float> first(t[0].data, t[0].data + t[0].numel());
    probed.set_tensor(t[0].name, first);
  }
  EXPECT_TRUE(skipped >= 1) << "the 2^24 start should overflow f16";
  EXPECT_EQ(plain.step_count(), 8 - skipped);
  EXPECT_EQ(plain.loss_scale().skipped_steps, skipped);
  EXPECT_EQ(gpu.step_count(), 8);
  // Restore into a fresh trainer and continue both for 2 steps.
  train::Trainer restored = make(Device::cuda);
  for (const train::NamedTensor& n : plain.tensors())
    restored.set_tensor(n.name, std::span<const float>(n.data, static_cast<std::size_t>(n.numel())));
  restored.set_step_count(plain.step_count());
  restored.set_loss_scale(plain.loss_scale());
  for (int step = 0; step < 2; ++step) {
    std::vector<std::int32_t> ids(24), y(24);
    for (auto& x : ids) x = id(rng);
    for (auto& x : y) x = id(rng);
    const train::StepResult a = plain.step(ids, y), b = restored.step(ids, y);
    EXPECT_TRUE(std::memcmp(&a.loss, &b.loss, sizeof(double)) == 0 && a.loss_scale == b.loss_scale)
        << "seed " << seed << ": the restored trainer differs at step " << step;
  }
  std::vector<train::NamedTensor> x = plain.tensors(), z = restored.tensors();
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(std::memcmp(x[i].data, z[i].data, static_cast<std::size_t>(x[i].numel()) * sizeof(float)) == 0)
        << "seed " << seed << ": " << x[i].name << " differs after the restore";
}

TEST(CudaTrainer, WithoutAGpuTheTrainerSaysWhy) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a usable GPU";
  train::TrainerConfig tc;
  tc.device = Device::cuda;
  std::string message;
  ErrorKind kind = ErrorKind::invalid_argument;
  try {
    train::Trainer::gpt(tiny_gpt(), tc);
  } catch (const Error& e) {
    message = e.what();
    kind = e.kind();
  }
  EXPECT_TRUE(message.find("train::Trainer: device is cuda, but ") != std::string::npos &&
              kind == ErrorKind::unsupported)
      << message;
}

}  // namespace ampkit::cuda_test
