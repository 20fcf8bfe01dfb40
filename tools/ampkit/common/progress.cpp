// The progress display of `ampkit train` (tools layer, common/). See progress.hpp.
#include "tools/ampkit/common/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>

namespace ampkit::tools {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string format_count(double v) {
  if (!std::isfinite(v)) return "?";
  char buf[32];
  const double a = std::fabs(v);
  if (a < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a < 1e6)
    std::snprintf(buf, sizeof buf, a < 1e4 ? "%.2fk" : a < 1e5 ? "%.1fk" : "%.0fk", v / 1e3);
  else if (a < 1e9)
    std::snprintf(buf, sizeof buf, a < 1e7 ? "%.2fM" : a < 1e8 ? "%.1fM" : "%.0fM", v / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  return buf;
}

bool is_terminal(std::FILE* stream) { return stream != nullptr && ::isatty(::fileno(stream)) == 1; }

int terminal_columns(std::FILE* stream) {
  struct winsize w {};
  if (stream != nullptr && ::ioctl(::fileno(stream), TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

Progress::Progress(std::FILE* out, bool live, std::int64_t first_step, std::int64_t steps, std::int64_t every,
                   int columns)
    : out_(out),
      live_(live),
      first_step_(first_step),
      steps_(steps),
      every_(every < 1 ? 1 : every),
      columns_(columns) {}

void Progress::update(std::int64_t step, double loss, double tokens_per_second, double elapsed) {
  step_ = step;
  tokens_per_second_ = tokens_per_second;
  elapsed_ = elapsed;
  if (std::isfinite(loss)) {
    loss_sum_ += loss;
    ++loss_count_;
  }
  const bool last = step >= steps_;
  if (live_) {
    if (!last && last_draw_ >= 0.0 && elapsed - last_draw_ < 0.1) return;
    last_draw_ = elapsed;
  } else if (step % every_ != 0 && !last && step != first_step_ + 1) {
    return;
  }
  shown_loss_ = loss_count_ > 0 ? loss_sum_ / static_cast<double>(loss_count_) : loss;
  loss_sum_ = 0.0;
  loss_count_ = 0;
  if (live_) {
    std::fputs(live_line().c_str(), out_);
    drawn_ = true;
  } else {
    std::fprintf(out_, "%s\n", plain_line().c_str());
  }
  std::fflush(out_);
}

std::string Progress::live_line() const {
  const std::int64_t done = step_ - first_step_, total = steps_ - first_step_;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const double left = done > 0 ? elapsed_ / static_cast<double>(done) * static_cast<double>(steps_ - step_) : NAN;
  constexpr int kBar = 20;
  const int filled = static_cast<int>(fraction * kBar);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kBar - filled), '.');
  char buf[256];
  std::snprintf(buf, sizeof buf, "[%s] %lld/%lld  loss %.4f  %s tok/s  %s left", bar.c_str(),
                static_cast<long long>(step_), static_cast<long long>(steps_), shown_loss_,
                format_count(tokens_per_second_).c_str(), format_duration(left).c_str());
  std::string line = buf;
  if (columns_ > 1 && line.size() >= static_cast<std::size_t>(columns_))
    line.resize(static_cast<std::size_t>(columns_ - 1));
  return "\r" + line + "\x1b[K";  // erase what a longer previous line left
}

std::string Progress::plain_line() const {
  const std::int64_t done = step_ - first_step_;
  const double left = done > 0 ? elapsed_ / static_cast<double>(done) * static_cast<double>(steps_ - step_) : NAN;
  char buf[256];
  std::snprintf(buf, sizeof buf, "step %lld/%lld  loss %.4f  %s tok/s  elapsed %s  left %s",
                static_cast<long long>(step_), static_cast<long long>(steps_), shown_loss_,
                format_count(tokens_per_second_).c_str(), format_duration(elapsed_).c_str(),
                format_duration(left).c_str());
  return buf;
}

void Progress::note(const std::string& line) {
  if (live_ && drawn_) std::fputs("\r\x1b[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  drawn_ = false;
  last_draw_ = -1.0;  // redraw at the next update
  std::fflush(out_);
}

void Progress::finish() {
  if (live_ && drawn_) std::fputc('\n', out_);
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace ampkit::tools
