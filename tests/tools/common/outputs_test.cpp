// Tests of the outputs of `ampkit train` (tools/ampkit/common/progress, loss_plot): the progress
// line on a terminal and in a log, the SVG plot (well-formed, curves, ticks, legend) and its
// round-number ticks.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tests/train/train_test_support.hpp"
#include "tools/ampkit/common/loss_plot.hpp"
#include "tools/ampkit/common/progress.hpp"

namespace ampkit::tools {
namespace {

using ampkit::train::slurp;
using ampkit::train::TempDir;

// What `fn` writes to a FILE*.
template <typename Fn>
std::string captured(Fn&& fn) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = ::open_memstream(&buf, &size);
  fn(f);
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

TEST(TrainProgress, FormatsDurationsAndCounts) {
  EXPECT_EQ(format_duration(44.6), "45s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3725), "1h02m");
  EXPECT_EQ(format_duration(NAN), "?");
  EXPECT_EQ(format_count(850), "850");
  EXPECT_EQ(format_count(12345), "12.3k");
  EXPECT_EQ(format_count(1250000), "1.25M");
  EXPECT_EQ(format_count(2.5e9), "2.5G");
}

TEST(TrainProgress, PlainLinesEveryNStepsAndTheLast) {
  const std::string out = captured([](std::FILE* f) {
    Progress p(f, false, 0, 10, 4, 0);
    for (int s = 1; s <= 10; ++s) p.update(s, 2.0 + s, 1000.0, 0.5 * s);
    p.note("step 10: validation loss 1.5");
    p.finish();
  });
  EXPECT_EQ(out,
            "step 1/10  loss 3.0000  1.00k tok/s  elapsed 1s  left 5s\n"  // the first step
            "step 4/10  loss 5.0000  1.00k tok/s  elapsed 2s  left 3s\n"  // mean of steps 2..4
            "step 8/10  loss 8.5000  1.00k tok/s  elapsed 4s  left 1s\n"
            "step 10/10  loss 11.5000  1.00k tok/s  elapsed 5s  left 0s\n"
            "step 10: validation loss 1.5\n");
}

TEST(TrainProgress, LiveLineRedrawsInPlaceAtMostTenTimesASecond) {
  const std::string out = captured([](std::FILE* f) {
    Progress p(f, true, 0, 100, 5, 80);
    p.update(1, 4.0, 500.0, 0.01);
    p.update(2, 4.0, 500.0, 0.05);  // within 0.1 s: not drawn
    p.update(3, 3.0, 500.0, 0.2);
    p.note("step 3: validation loss 3.5");
    p.update(100, 1.0, 500.0, 9.0);
    p.finish();
  });
  std::vector<std::string> draws;
  for (std::size_t at = out.find('\r'); at != std::string::npos; at = out.find('\r', at + 1))
    draws.push_back(out.substr(at));
  ASSERT_GE(draws.size(), 4u) << out;
  EXPECT_EQ(out.rfind("\r[", 0), 0u);
  EXPECT_NE(out.find("] 1/100  loss 4.0000"), std::string::npos);
  EXPECT_EQ(out.find(" 2/100"), std::string::npos);
  EXPECT_NE(out.find("] 3/100  loss 3.5000"), std::string::npos);                   // the mean of steps 2 and 3
  EXPECT_NE(out.find("\r\x1b[Kstep 3: validation loss 3.5\n"), std::string::npos);  // the bar is cleared first
  EXPECT_NE(out.find("\r[####################] 100/100  loss 1.0000  500 tok/s  0s left\x1b[K\n"), std::string::npos);
  EXPECT_EQ(out.back(), '\n');
  // On a narrow terminal the line is cut to fit.
  const std::string narrow =
      captured([](std::FILE* f) { Progress(f, true, 0, 100, 5, 30).update(1, 4.0, 500.0, 0.01); });
  EXPECT_EQ(narrow, "\r[....................] 1/100 \x1b[K");
}

// The points attribute of `<polyline id="<id>" ...>`, or "" when there is none. Found without
// std::regex, which recurses once per character of a long attribute (a stack overflow under ASan).
std::string polyline_points(const std::string& svg, const std::string& id) {
  const std::size_t tag = svg.find("<polyline id=\"" + id + "\"");
  if (tag == std::string::npos) return "";
  const std::size_t end = svg.find('>', tag), at = svg.find("points=\"", tag);
  if (at == std::string::npos || at > end) return "";
  const std::size_t begin = at + 8, close = svg.find('"', begin);
  return svg.substr(begin, close - begin);
}

// Checks that `svg` is well-formed at the level the plot needs: every tag closed in order.
// Scanned by hand: std::regex recurses once per character of a long points attribute, which
// overflowed the stack under AddressSanitizer.
void expect_balanced_tags(const std::string& svg) {
  std::vector<std::string> open;
  for (std::size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::size_t end = svg.find('>', at);
    ASSERT_NE(end, std::string::npos) << "a tag at byte " << at << " never ends";
    const bool closing = svg[at + 1] == '/';
    std::size_t name_end = at + (closing ? 2 : 1);
    while (name_end < end && std::isalpha(static_cast<unsigned char>(svg[name_end]))) ++name_end;
    const std::string name = svg.substr(at + (closing ? 2 : 1), name_end - at - (closing ? 2 : 1));
    if (name.empty() || svg[end - 1] == '/') continue;  // <?xml ...?>, self-closing
    if (closing) {
      ASSERT_FALSE(open.empty()) << "</" << name << "> closes nothing";
      EXPECT_EQ(open.back(), name);
      open.pop_back();
    } else {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty());
}

TEST(TrainPlot, NiceTicksAreRoundAndCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 1000, 8), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(nice_ticks(1.37, 4.71, 6), (std::vector<double>{1, 2, 3, 4, 5}));  // 3.34 / 6 -> steps of 1
  EXPECT_EQ(nice_ticks(1.37, 3.2, 6), (std::vector<double>{1.0, 1.5, 2.0, 2.5, 3.0, 3.5}));
  const std::vector<double> t = nice_ticks(0.0012, 0.0049, 5);
  EXPECT_LE(t.front(), 0.0012);
  EXPECT_GE(t.back(), 0.0049);
}

TEST(TrainPlot, SvgHasBothCurvesAxesAndLegend) {
  LossCurves c;
  c.title = "gpt <2 blocks> & bf16";
  for (int s = 1; s <= 500; ++s) c.train.push_back({s, 4.5 * std::exp(-s / 150.0) + 1.2});
  c.train[10].loss = NAN;  // left out
  c.validation = {{0, 4.7}, {250, 1.6}, {500, 1.4}};
  c.baseline = 3.3;
  const std::string svg = render_loss_svg(c);
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  expect_balanced_tags(svg);
  EXPECT_NE(svg.find("gpt &lt;2 blocks&gt; &amp; bf16"), std::string::npos);
  const std::string points = polyline_points(svg, "train");
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 499);  // 500 steps, one not finite
  const std::string validation = polyline_points(svg, "validation");
  EXPECT_EQ(std::count(validation.begin(), validation.end(), ','), 3);
  EXPECT_NE(svg.find("id=\"baseline\""), std::string::npos);
  for (const char* text : {">training loss<", ">validation loss<", ">unigram baseline<", ">step<",
                           ">loss (nats per character)<", ">0<", ">500<", ">1<", ">5<"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
}

TEST(TrainPlot, EmptyAndLongRunsStillPlot) {
  const std::string empty = render_loss_svg(LossCurves{});
  expect_balanced_tags(empty);
  EXPECT_NE(empty.find("no data yet"), std::string::npos);
  LossCurves c;
  for (int s = 1; s <= 10000; ++s) c.train.push_back({s, 2.0});
  const std::string svg = render_loss_svg(c);
  const std::string points = polyline_points(svg, "train");
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 2000);  // averaged in buckets of 5
}

TEST(TrainPlot, WrittenAtomically) {
  TempDir dir;
  LossCurves c;
  c.train = {{1, 3.0}, {2, 2.0}};
  write_loss_svg(dir.file("loss.svg"), c);
  EXPECT_EQ(slurp(dir.file("loss.svg")), render_loss_svg(c));
  EXPECT_THROW(write_loss_svg(dir.file("no/such/loss.svg"), c), Error);
}

}  // namespace
}  // namespace ampkit::tools
