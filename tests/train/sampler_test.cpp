// Tests of the train layer's sampler (src/train/sampler): greedy, top-k and temperature draws,
// the same draws for the same seed, and diverged logits refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/sampler.hpp"

namespace ampkit::train {
namespace {

TEST(TrainSampler, GreedyTopKAndTemperature) {
  const std::vector<float> logits = {0.0f, 3.0f, 1.0f, 3.0f, -INFINITY};
  Sampler greedy(0.0, 0, 1);
  EXPECT_EQ(greedy.next(logits), 1);  // ties go to the lower index
  Sampler top1(1.0, 1, 1);
  EXPECT_EQ(top1.next(logits), 1);
  // top-k 2 draws only 1 and 3, about equally.
  Sampler top2(1.0, 2, 7);
  int counts[5] = {};
  for (int i = 0; i < 4000; ++i) ++counts[top2.next(logits)];
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  EXPECT_NEAR(counts[1], 2000, 200);
  // All tokens at temperature 1: frequencies follow softmax; -inf never drawn.
  Sampler all(1.0, 0, 11);
  int c2[5] = {};
  const int n = 40000;
  for (int i = 0; i < n; ++i) ++c2[all.next(logits)];
  const double z = 1 + 2 * std::exp(3.0) + std::exp(1.0);
  EXPECT_NEAR(c2[0] / double(n), 1 / z, 0.01);
  EXPECT_NEAR(c2[2] / double(n), std::exp(1.0) / z, 0.01);
  EXPECT_EQ(c2[4], 0);
  // A low temperature sharpens: token 2 almost never.
  Sampler cold(0.1, 0, 11);
  int cold2 = 0;
  for (int i = 0; i < 1000; ++i) cold2 += cold.next(logits) == 2;
  EXPECT_EQ(cold2, 0);
}

TEST(TrainSampler, SameSeedSameDraws) {
  const std::vector<float> logits = {0.5f, 0.1f, 0.3f, 0.2f};
  Sampler a(0.8, 3, 42), b(0.8, 3, 42), c(0.8, 3, 43);
  std::vector<int> x, y, z;
  for (int i = 0; i < 64; ++i) {
    x.push_back(a.next(logits));
    y.push_back(b.next(logits));
    z.push_back(c.next(logits));
  }
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(TrainSampler, DivergedLogitsAreAnError) {
  Sampler s(1.0, 0, 1);
  const std::vector<float> nan = {0.0f, NAN};
  EXPECT_THROW(s.next(nan), Error);
  const std::vector<float> none = {-INFINITY, -INFINITY};
  EXPECT_THROW(s.next(none), Error);
  EXPECT_THROW(s.next({}), Error);
  EXPECT_THROW(Sampler(-1.0, 0, 1), Error);
}

}  // namespace
}  // namespace ampkit::train
