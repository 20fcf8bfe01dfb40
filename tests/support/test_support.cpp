// Shared test helpers (see test_support.hpp).
#include "support/test_support.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"

namespace ampkit::testing {

std::uint64_t fresh_seed() {
  if (const char* env = std::getenv("AMPKIT_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

double Buffer::get(std::int64_t i) const { return cpu::load_element(data(), dtype, i); }

void Buffer::set(std::int64_t i, double v) { cpu::store_element(data(), dtype, i, static_cast<float>(v)); }

void Buffer::poison() {
  for (std::int64_t i = 0; i < size(); ++i) set(i, std::nan(""));
}

void Buffer::fill_normal(std::mt19937_64& rng, double mean, double stddev) {
  std::normal_distribution<double> dist(mean, stddev);
  for (std::int64_t i = 0; i < size(); ++i) set(i, dist(rng));
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32: return 0x1p-24;
    case DType::bf16: return 0x1p-8;
    case DType::f16: return 0x1p-11;
    case DType::i32: break;
  }
  return 1.0;
}

std::vector<Isa> available_isas() {
  std::vector<Isa> isas{Isa::ref};
  const Isa best = cpu_features().best();
  if (static_cast<int>(best) >= static_cast<int>(Isa::avx2)) isas.push_back(Isa::avx2);
  if (static_cast<int>(best) >= static_cast<int>(Isa::avx512)) isas.push_back(Isa::avx512);
  if (static_cast<int>(best) >= static_cast<int>(Isa::amx)) isas.push_back(Isa::amx);
  // AMPKIT_ISA caps the whole run (CI runs the suite once per cap).
  const Isa cap = active_isa();
  std::erase_if(isas, [cap](Isa i) { return static_cast<int>(i) > static_cast<int>(cap); });
  return isas;
}

IsaScope::IsaScope(Isa isa) : previous_(active_isa()) { set_isa_cap(isa); }
IsaScope::~IsaScope() { set_isa_cap(previous_); }

ThreadsScope::ThreadsScope(int n) : previous_(num_threads()) { set_num_threads(n); }
ThreadsScope::~ThreadsScope() { set_num_threads(previous_); }

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double gelu_tanh_derivative(double x) {
  const double k = std::sqrt(2.0 / M_PI), u = k * (x + 0.044715 * x * x * x), t = std::tanh(u);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
}

}  // namespace ampkit::testing
