// The loss plot of `ampkit train --plot FILE.svg` (tools layer, common/): a standalone SVG (any
// browser shows it) with the training loss per step, the validation loss at each evaluation,
// the unigram baseline as a dashed line, axes with round-number ticks, labels and a legend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ampkit/train/checkpoint.hpp"

namespace ampkit::tools {

using ampkit::train::CurvePoint;

struct LossCurves {
  std::string title;
  std::vector<CurvePoint> train, validation;
  std::optional<double> baseline;  // drawn as a dashed horizontal line
};

/// Round-number ticks (1, 2 or 5 times a power of ten apart) covering [lo, hi], at most about
/// `target` + 2 of them, the first <= lo and the last >= hi. lo < hi, both finite.
std::vector<double> nice_ticks(double lo, double hi, int target);

/// The SVG document. Non-finite losses are left out (a gap in the line); with no finite point
/// the axes say "no data yet". More than kMaxPlotPoints training points are averaged in buckets.
std::string render_loss_svg(const LossCurves& curves);
constexpr std::size_t kMaxPlotPoints = 2000;

/// Writes render_loss_svg to `path` atomically. Throws ampkit::Error.
void write_loss_svg(const std::string& path, const LossCurves& curves);

}  // namespace ampkit::tools
