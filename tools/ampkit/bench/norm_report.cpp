// The output of `ampkit bench norm` (tools layer, bench/): JSON lines with fixed keys, the table,
// and where the run stands against the norm targets of docs/PERFORMANCE.md ("Where the open
// targets stand"). See norm_report.hpp.
#include "tools/ampkit/bench/norm_report.hpp"

#include <cstdio>

#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::bench {

std::string format_time(double ms) {
  char buf[32];
  if (ms < 1.0)
    std::snprintf(buf, sizeof buf, "%.2f us", ms * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  return buf;
}

void print_norm_json(const NormRow& r) {
  JsonLine j;
  j.add("op", norm_op_name(r.op)).add("pass", norm_pass_name(r.pass)).add("shape", r.shape->dims);
  j.add("rows", r.shape->rows).add("n", r.shape->n).add("dtype", r.dtype->name);
  j.add("x_dtype", dtype_name(r.dtype->x)).add("param_dtype", dtype_name(r.dtype->param));
  j.add("threads", r.threads).add("isa", isa_name(active_isa()));
  if (!r.error.empty()) {
    j.add("error", r.error);
    std::printf("%s\n", j.str().c_str());
    return;
  }
  j.add("kernel", r.kernel).add("ms", r.ampkit.median_ms).add("min_ms", r.ampkit.min_ms);
  j.add("samples", r.ampkit.samples).add("bytes", r.bytes).add("gbps", gbps(r));
  j.add("copy_gbps", r.copy_gbps).add("copy_footprint_bytes", r.copy_footprint);
  j.add("fraction_of_copy", gbps(r) / r.copy_gbps).add("dram_copy_gbps", r.dram_copy_gbps);
  if (r.peer) {
    j.add("peer", "onednn").add("peer_ms", r.peer->median_ms);
    j.add("ratio_to_peer", r.peer->median_ms / r.ampkit.median_ms).add("peer_impl", r.peer_impl);
  } else {
    j.add_null("peer").add_null("peer_ms").add_null("ratio_to_peer").add("peer_note", r.peer_note);
  }
  std::printf("%s\n", j.str().c_str());
  std::fflush(stdout);
}

void print_norm_table_header() {
  std::printf("%-10s %-8s %-16s %-9s %3s %10s %10s %7s %7s %6s %10s %6s  %s\n", "op", "pass", "shape", "dtype", "thr",
              "time", "best", "GB/s", "copy", "x copy", "oneDNN", "ratio", "kernel / peer note");
}

void print_norm_table_row(const NormRow& r) {
  std::printf("%-10s %-8s %-16s %-9s %3d ", norm_op_name(r.op), norm_pass_name(r.pass), r.shape->text.c_str(),
              r.dtype->name.c_str(), r.threads);
  if (!r.error.empty()) {
    std::printf("error: %s\n", r.error.c_str());
    return;
  }
  std::printf("%10s %10s %7.1f %7.1f %6.2f ", format_time(r.ampkit.median_ms).c_str(),
              format_time(r.ampkit.min_ms).c_str(), gbps(r), r.copy_gbps, gbps(r) / r.copy_gbps);
  if (r.peer)
    std::printf("%10s %6.2f  %s / %s\n", format_time(r.peer->median_ms).c_str(), r.peer->median_ms / r.ampkit.median_ms,
                r.kernel.c_str(), r.peer_impl.c_str());
  else
    std::printf("%10s %6s  %s / %s\n", "-", "-", r.kernel.c_str(), r.peer_note.c_str());
  std::fflush(stdout);
}

void print_norm_torch(const std::vector<NormRow>& rows, const std::string& version, bool json) {
  if (!json)
    std::printf(
        "\nPyTorch %s (bench/torch_norm_cpu.py, own process, same threads); ratio = PyTorch time / ampkit "
        "time (> 1: ampkit faster):\n%-10s %-8s %-16s %-9s %3s %10s %10s %7s\n",
        version.c_str(), "op", "pass", "shape", "dtype", "thr", "ampkit", "PyTorch", "ratio");
  for (const NormRow& r : rows) {
    if (!r.error.empty()) continue;
    if (json) {
      JsonLine j;
      j.add("peer", "torch").add("op", norm_op_name(r.op)).add("pass", norm_pass_name(r.pass));
      j.add("shape", r.shape->dims).add("dtype", r.dtype->name).add("threads", r.threads);
      j.add("ms", r.ampkit.median_ms);
      if (r.torch_ms > 0)
        j.add("torch_ms", r.torch_ms).add("ratio_to_torch", r.torch_ms / r.ampkit.median_ms).add("version", version);
      else
        j.add_null("torch_ms").add("torch_note", r.torch_note);
      std::printf("%s\n", j.str().c_str());
      continue;
    }
    std::printf("%-10s %-8s %-16s %-9s %3d %10s ", norm_op_name(r.op), norm_pass_name(r.pass), r.shape->text.c_str(),
                r.dtype->name.c_str(), r.threads, format_time(r.ampkit.median_ms).c_str());
    if (r.torch_ms > 0)
      std::printf("%10s %7.2f\n", format_time(r.torch_ms).c_str(), r.torch_ms / r.ampkit.median_ms);
    else
      std::printf("%10s %7s  %s\n", "-", "-", r.torch_note.c_str());
  }
  std::fflush(stdout);
}

void print_norm_targets(const std::vector<NormRow>& rows) {
  int large = 0, large_met = 0, mixed = 0, mixed_met = 0, small = 0, small_met = 0;
  std::string large_worst, mixed_worst, small_worst;
  double large_min = 1e9, mixed_max = 0.0, small_max = 0.0;
  for (const NormRow& r : rows) {
    if (!r.error.empty()) continue;
    const std::string name = std::string(norm_op_name(r.op)) + " " + norm_pass_name(r.pass) + " " + r.shape->text +
                             " " + r.dtype->name + " t" + std::to_string(r.threads);
    if (r.shape->elements() >= (std::int64_t{1} << 20)) {
      const double f = gbps(r) / r.copy_gbps;
      ++large;
      large_met += f >= 0.85;
      if (f < large_min) large_min = f, large_worst = name;
    } else {
      ++small;
      small_met += r.ampkit.median_ms < 2e-3;
      if (r.ampkit.median_ms > small_max) small_max = r.ampkit.median_ms, small_worst = name;
    }
    if (r.dtype->name != "mixed") continue;
    for (const NormRow& b : rows) {
      if (b.op != r.op || b.pass != r.pass || b.shape != r.shape || b.threads != r.threads || b.dtype->name != "bf16" ||
          !b.error.empty())
        continue;
      const double ratio = r.ampkit.median_ms / b.ampkit.median_ms;
      ++mixed;
      mixed_met += ratio <= 1.05;  // within the timing noise of one run
      if (ratio > mixed_max) mixed_max = ratio, mixed_worst = name;
    }
  }
  std::printf("\ntargets:\n");
  if (large > 0)
    std::printf("  shapes >= 2^20 elements at >= 0.85 x copy (same footprint): %d of %d; lowest %.2f (%s)\n", large_met,
                large, large_min, large_worst.c_str());
  if (mixed > 0)
    std::printf(
        "  mixed no slower than bf16 (within 5%%): %d of %d; worst mixed/bf16 time %.2f "
        "(%s)\n",
        mixed_met, mixed, mixed_max, mixed_worst.c_str());
  if (small > 0)
    std::printf("  small shapes < 2 us per call: %d of %d; slowest %s (%s)\n", small_met, small,
                format_time(small_max).c_str(), small_worst.c_str());
}

}  // namespace ampkit::tools::bench
