// Tests of the train layer's learning-rate schedule (src/train/schedule): the linear warm-up and
// the cosine decay to a tenth.
#include <gtest/gtest.h>

#include <cstdint>

#include "ampkit/train/schedule.hpp"

namespace ampkit::train {
namespace {

TEST(TrainSchedule, WarmsUpLinearlyThenDecaysByCosineToATenth) {
  const LrSchedule s{1e-2, 10, 111};
  EXPECT_DOUBLE_EQ(s.at(0), 1e-3);
  EXPECT_DOUBLE_EQ(s.at(4), 5e-3);
  EXPECT_DOUBLE_EQ(s.at(9), 1e-2);
  EXPECT_DOUBLE_EQ(s.at(10), 1e-2);      // the decay starts at the peak
  EXPECT_NEAR(s.at(60), 5.5e-3, 1e-15);  // halfway (p = 50/100): the mean of peak and final
  EXPECT_DOUBLE_EQ(s.at(110), 1e-3);     // the last step: a tenth
  EXPECT_DOUBLE_EQ(s.at(500), 1e-3);
  for (std::int64_t i = 10; i < 110; ++i) EXPECT_GT(s.at(i), s.at(i + 1));
  for (std::int64_t i = 0; i < 9; ++i) EXPECT_LT(s.at(i), s.at(i + 1));
  EXPECT_DOUBLE_EQ((LrSchedule{1.0, 0, 1}.at(0)), 1.0);  // one step: the peak
  EXPECT_DOUBLE_EQ((LrSchedule{1.0, 0, 2}.at(1)), 0.1);
}

}  // namespace
}  // namespace ampkit::train
