// The progress display of `ampkit train` (tools layer, common/): on a terminal, one live line
// redrawn in place with '\r' (bar, step, loss, tokens/s, time left) at most ten times a second;
// elsewhere (a pipe, a CI log), a plain line every `every` steps. Time comes from the caller, so
// the output of a given sequence of updates is fixed (and tested).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace ampkit::tools {

/// "45s", "3m05s", "1h02m"; "?" when not finite or negative.
std::string format_duration(double seconds);
/// "850", "12.3k", "1.25M" (three significant digits).
std::string format_count(double value);
/// True when `stream` is a terminal.
bool is_terminal(std::FILE* stream);
/// The terminal's columns (80 when it cannot be asked).
int terminal_columns(std::FILE* stream);

class Progress {
 public:
  /// Steps first_step+1 .. steps will be reported. `columns` limits the live line (0: none).
  Progress(std::FILE* out, bool live, std::int64_t first_step, std::int64_t steps, std::int64_t every, int columns);

  /// Step `step` (1-based) finished with `loss`, `elapsed` seconds (wall time) after this
  /// process's first step started, at `tokens_per_second`. Time left = elapsed per step done x
  /// steps left.
  void update(std::int64_t step, double loss, double tokens_per_second, double elapsed);
  /// Prints a line of its own (the live line is cleared first and redrawn by the next update).
  void note(const std::string& line);
  /// Ends the live line.
  void finish();

  /// The live line ("\r[#####.....] 120/1000  loss 2.3456  12.3k tok/s  1m32s left") and the
  /// plain line for the current state (what update prints).
  std::string live_line() const;
  std::string plain_line() const;

 private:
  std::FILE* out_;
  bool live_;
  std::int64_t first_step_, steps_, every_;
  int columns_;
  std::int64_t step_ = 0;
  double loss_sum_ = 0.0, shown_loss_ = 0.0, tokens_per_second_ = 0.0, elapsed_ = 0.0;
  std::int64_t loss_count_ = 0;
  double last_draw_ = -1.0;
  bool drawn_ = false;
};

}  // namespace ampkit::tools
