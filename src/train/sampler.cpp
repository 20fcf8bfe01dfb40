// Temperature / top-k sampling of `ampkit train` (train layer). See sampler.hpp.
#include "ampkit/train/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ampkit/core/error.hpp"

namespace ampkit::train {

Sampler::Sampler(double temperature, std::int64_t top_k, std::uint64_t seed)
    : temperature_(temperature), top_k_(top_k), rng_(seed) {
  if (!(temperature >= 0.0) || !std::isfinite(temperature) || top_k < 0)
    throw Error(detail::concat("Sampler: need temperature >= 0 and top_k >= 0, but got ", temperature, " and ", top_k));
}

std::int32_t Sampler::next(std::span<const float> logits) {
  if (logits.empty()) throw Error("Sampler: no logits");
  std::vector<std::int32_t> order;
  order.reserve(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l) || l == INFINITY)
      throw Error(detail::concat("sampling: the model's logit ", i, " is ", l, " (the model diverged)"));
    if (l != -INFINITY) order.push_back(static_cast<std::int32_t>(i));
  }
  if (order.empty()) throw Error("sampling: every logit is -inf");
  const auto before = [&](std::int32_t a, std::int32_t b) {
    const float la = logits[static_cast<std::size_t>(a)], lb = logits[static_cast<std::size_t>(b)];
    return la != lb ? la > lb : a < b;
  };
  const std::size_t k = top_k_ > 0 ? std::min(order.size(), static_cast<std::size_t>(top_k_)) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), before);
  order.resize(k);
  if (temperature_ == 0.0 || k == 1) return order.front();
  const double top = logits[static_cast<std::size_t>(order.front())];
  std::vector<double> weight(k);
  for (std::size_t i = 0; i < k; ++i)
    weight[i] = std::exp((static_cast<double>(logits[static_cast<std::size_t>(order[i])]) - top) / temperature_);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  double u = rng_.unit() * total;
  for (std::size_t i = 0; i < k; ++i) {
    if (u < weight[i]) return order[i];
    u -= weight[i];
  }
  return order[k - 1];  // rounding left u just above the total
}

}  // namespace ampkit::train
