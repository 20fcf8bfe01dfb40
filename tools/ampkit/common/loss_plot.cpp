// The SVG loss plot of `ampkit train` (tools layer, common/). See loss_plot.hpp.
#include "tools/ampkit/common/loss_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ampkit/train/files.hpp"

namespace ampkit::tools {
namespace {

constexpr double kWidth = 800, kHeight = 480;
constexpr double kLeft = 72, kRight = 24, kTop = 44, kBottom = 56;

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A tick label with as many decimals as the tick spacing needs.
std::string tick_label(double v, double spacing) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(spacing) + 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v) < spacing * 1e-6 ? 0.0 : v);
  return buf;
}

// The training curve, averaged in buckets when it has more than kMaxPlotPoints finite points.
std::vector<CurvePoint> thin(const std::vector<CurvePoint>& curve) {
  std::vector<CurvePoint> finite;
  for (const CurvePoint& p : curve)
    if (std::isfinite(p.loss)) finite.push_back(p);
  if (finite.size() <= kMaxPlotPoints) return finite;
  std::vector<CurvePoint> out;
  const std::size_t per = (finite.size() + kMaxPlotPoints - 1) / kMaxPlotPoints;
  for (std::size_t i = 0; i < finite.size(); i += per) {
    const std::size_t end = std::min(finite.size(), i + per);
    double sum = 0.0;
    for (std::size_t j = i; j < end; ++j) sum += finite[j].loss;
    out.push_back({finite[end - 1].step, sum / static_cast<double>(end - i)});
  }
  return out;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double spacing = magnitude;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      spacing = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  const double first = std::floor(lo / spacing + 1e-9) * spacing;
  for (int i = 0;; ++i) {
    const double t = first + i * spacing;
    ticks.push_back(t);
    if (t >= hi - spacing * 1e-9 || i > 1000) break;
  }
  return ticks;
}

std::string render_loss_svg(const LossCurves& curves) {
  const std::vector<CurvePoint> train = thin(curves.train);
  std::vector<CurvePoint> validation;
  for (const CurvePoint& p : curves.validation)
    if (std::isfinite(p.loss)) validation.push_back(p);

  double x_max = 1, y_lo = INFINITY, y_hi = -INFINITY;
  for (const std::vector<CurvePoint>* c : std::initializer_list<const std::vector<CurvePoint>*>{&train, &validation})
    for (const CurvePoint& p : *c) {
      x_max = std::max(x_max, static_cast<double>(p.step));
      y_lo = std::min(y_lo, p.loss);
      y_hi = std::max(y_hi, p.loss);
    }
  const bool has_data = std::isfinite(y_lo);
  if (curves.baseline && std::isfinite(*curves.baseline) && has_data) {
    y_lo = std::min(y_lo, *curves.baseline);
    y_hi = std::max(y_hi, *curves.baseline);
  }
  if (!has_data) y_lo = 0, y_hi = 1;
  if (y_hi - y_lo < 1e-6) y_lo -= 0.5, y_hi += 0.5;
  const std::vector<double> xt = nice_ticks(0.0, x_max, 8);
  const std::vector<double> yt = nice_ticks(y_lo, y_hi, 6);
  const double x0 = xt.front(), x1 = xt.back(), y0 = yt.front(), y1 = yt.back();
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return kTop + (1.0 - (y - y0) / (y1 - y0)) * ph; };

  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt(kWidth) + "\" height=\"" + fmt(kHeight) +
       "\" viewBox=\"0 0 " + fmt(kWidth) + " " + fmt(kHeight) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + fmt(kWidth / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
       xml_escape(curves.title) + "</text>\n";
  // Grid, ticks and tick labels.
  s += "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (double t : xt)
    s += "<line x1=\"" + fmt(px(t)) + "\" y1=\"" + fmt(kTop) + "\" x2=\"" + fmt(px(t)) + "\" y2=\"" + fmt(kTop + ph) +
         "\"/>\n";
  for (double t : yt)
    s += "<line x1=\"" + fmt(kLeft) + "\" y1=\"" + fmt(py(t)) + "\" x2=\"" + fmt(kLeft + pw) + "\" y2=\"" + fmt(py(t)) +
         "\"/>\n";
  s += "</g>\n<g fill=\"#333\">\n";
  const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1.0, ys = yt.size() > 1 ? yt[1] - yt[0] : 1.0;
  for (double t : xt)
    s += "<text x=\"" + fmt(px(t)) + "\" y=\"" + fmt(kTop + ph + 18) + "\" text-anchor=\"middle\">" +
         tick_label(t, xs) + "</text>\n";
  for (double t : yt)
    s += "<text x=\"" + fmt(kLeft - 8) + "\" y=\"" + fmt(py(t) + 4) + "\" text-anchor=\"end\">" + tick_label(t, ys) +
         "</text>\n";
  s += "<text x=\"" + fmt(kLeft + pw / 2) + "\" y=\"" + fmt(kHeight - 12) + "\" text-anchor=\"middle\">step</text>\n";
  s += "<text transform=\"translate(18 " + fmt(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">loss (nats per character)</text>\n";
  s += "</g>\n";
  s += "<rect x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop) + "\" width=\"" + fmt(pw) + "\" height=\"" + fmt(ph) +
       "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/>\n";
  if (!has_data)
    s += "<text x=\"" + fmt(kLeft + pw / 2) + "\" y=\"" + fmt(kTop + ph / 2) +
         "\" text-anchor=\"middle\" fill=\"#888\">no data yet</text>\n";
  // Curves.
  if (curves.baseline && std::isfinite(*curves.baseline) && has_data)
    s += "<line id=\"baseline\" x1=\"" + fmt(kLeft) + "\" y1=\"" + fmt(py(*curves.baseline)) + "\" x2=\"" +
         fmt(kLeft + pw) + "\" y2=\"" + fmt(py(*curves.baseline)) +
         "\" stroke=\"#888\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
  auto polyline = [&](const std::vector<CurvePoint>& c, const char* id, const char* color, double width) {
    if (c.empty()) return;
    s += std::string("<polyline id=\"") + id + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" +
         fmt(width) + "\" stroke-linejoin=\"round\" points=\"";
    for (std::size_t i = 0; i < c.size(); ++i)
      s.append(i ? " " : "").append(fmt(px(static_cast<double>(c[i].step)))).append(",").append(fmt(py(c[i].loss)));
    s += "\"/>\n";
  };
  polyline(train, "train", "#1f77b4", 1.2);
  polyline(validation, "validation", "#d62728", 2.0);
  for (const CurvePoint& p : validation)
    s += "<circle cx=\"" + fmt(px(static_cast<double>(p.step))) + "\" cy=\"" + fmt(py(p.loss)) +
         "\" r=\"3\" fill=\"#d62728\"/>\n";
  // Legend, top right.
  const double lx = kLeft + pw - 190, ly = kTop + 10;
  const int rows = 2 + (curves.baseline && has_data ? 1 : 0);
  s += "<g id=\"legend\">\n<rect x=\"" + fmt(lx) + "\" y=\"" + fmt(ly) + "\" width=\"180\" height=\"" +
       fmt(8 + 18 * rows) + "\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999\"/>\n";
  auto entry = [&](int row, const char* color, const char* dash, const char* label) {
    const double y = ly + 16 + 18 * row;
    s += "<line x1=\"" + fmt(lx + 8) + "\" y1=\"" + fmt(y - 4) + "\" x2=\"" + fmt(lx + 36) + "\" y2=\"" + fmt(y - 4) +
         "\" stroke=\"" + color + "\" stroke-width=\"2\"" + dash + "/>\n";
    s += "<text x=\"" + fmt(lx + 44) + "\" y=\"" + fmt(y) + "\">" + label + "</text>\n";
  };
  entry(0, "#1f77b4", "", "training loss");
  entry(1, "#d62728", "", "validation loss");
  if (rows == 3) entry(2, "#888", " stroke-dasharray=\"6 4\"", "unigram baseline");
  s += "</g>\n</svg>\n";
  return s;
}

void write_loss_svg(const std::string& path, const LossCurves& curves) {
  ampkit::train::write_file_atomically(path, render_loss_svg(curves), "plot");
}

}  // namespace ampkit::tools
