// The results of `ampkit bench gemm` / `bench linear` (tools layer, bench/): the peaks, the
// JSON lines and the table. See gemm_rows.hpp.
#include "tools/ampkit/bench/gemm_rows.hpp"

#include <cstdio>

#include "tools/ampkit/bench/machine.hpp"
#include "tools/ampkit/bench/peak.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::bench {

Peaks Peaks::measure(const std::vector<int>& threads, int reps, BenchClock clock) {
  Peaks p;
  p.threads = threads;
  p.clock = clock;
  for (int t : threads) {
    p.fma_f32.push_back(measure_peak_gflops(PeakKind::fma_f32, t, reps, clock));
    p.bf16_dot.push_back(measure_peak_gflops(PeakKind::dpbf16, t, reps, clock));
    p.amx_bf16.push_back(measure_peak_gflops(PeakKind::amx_bf16, t, reps, clock));
  }
  return p;
}

void Peaks::remeasure_keep_max(int reps) {
  const Peaks again = measure(threads, reps, clock);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!(fma_f32[i] >= again.fma_f32[i])) fma_f32[i] = again.fma_f32[i];
    if (!(bf16_dot[i] >= again.bf16_dot[i])) bf16_dot[i] = again.bf16_dot[i];
    if (!(amx_bf16[i] >= again.amx_bf16[i])) amx_bf16[i] = again.amx_bf16[i];
  }
}

double Peaks::for_case(const DtypeMode& dm, const std::string& kernel, int t, const char** name) const {
  const bool bf16 = dm.dtype == DType::bf16 || (dm.dtype == DType::f16 && dm.mode == Fp16Mode::alt);
  const bool amx = kernel.ends_with("_amx");
  const PeakKind kind = amx ? PeakKind::amx_bf16 : bf16 ? PeakKind::dpbf16 : PeakKind::fma_f32;
  *name = peak_name(kind);
  for (std::size_t i = 0; i < threads.size(); ++i)
    if (threads[i] == t) return kind == PeakKind::amx_bf16 ? amx_bf16[i] : bf16 ? bf16_dot[i] : fma_f32[i];
  return std::nan("");
}

void print_json_rows(const std::vector<BenchRow>& rows) {
  for (const BenchRow& r : rows) {
    JsonLine j;
    j.add("op", r.op);
    if (r.op == "linear") {
      j.add("pass", r.pass);
      j.add("batch", r.batch).add("in", r.in).add("out", r.out);
    }
    j.add("m", r.shape.m).add("n", r.shape.n).add("k", r.shape.k);
    j.add("ops", op_pair_name(r.shape.op_a, r.shape.op_b));
    j.add("dtype", dtype_name(r.dm.dtype));
    if (r.dm.dtype == DType::f16) j.add("fp16_mode", fp16_mode_name(r.dm.mode));
    j.add("epilogue", epilogue_name(r.epilogue)).add("threads", r.threads);
    j.add("ms", r.ms).add("gflops", r.gflops);
    j.add("peak", r.peak_name).add("peak_gflops", r.peak).add("fraction_of_peak", r.gflops / r.peak);
    // The strongest peer measured for this case, then each peer on its own.
    const bool ob = !std::isnan(r.openblas_gflops), od = !std::isnan(r.onednn_gflops), pt = !std::isnan(r.torch_gflops);
    std::string best;
    double best_gflops = 0.0;
    auto consider = [&](bool measured, const std::string& what, double g) {
      if (measured && g > best_gflops) best = what, best_gflops = g;
    };
    consider(ob, "openblas_sgemm", r.openblas_gflops);
    consider(od, r.onednn_what, r.onednn_gflops);
    consider(pt, r.torch_what, r.torch_gflops);
    if (!best.empty()) j.add("peer", best).add("peer_gflops", best_gflops).add("ratio_to_peer", r.gflops / best_gflops);
    if (ob) j.add("openblas_gflops", r.openblas_gflops).add("ratio_to_openblas", r.gflops / r.openblas_gflops);
    if (od) {
      j.add("onednn", r.onednn_what);
      j.add("onednn_gflops", r.onednn_gflops).add("ratio_to_onednn", r.gflops / r.onednn_gflops);
    }
    if (pt) {
      j.add("torch", r.torch_what);
      j.add("torch_gflops", r.torch_gflops).add("ratio_to_torch", r.gflops / r.torch_gflops);
    }
    if (r.bytes > 0.0) {
      const double gbps = r.bytes / (r.ms * 1e6);
      j.add("gbps", gbps).add("copy_gbps", r.copy_gbps).add("fraction_of_copy", gbps / r.copy_gbps);
      j.add("read_gbps", r.read_gbps).add("fraction_of_read", gbps / r.read_gbps);
    }
    j.add("kernel", r.kernel);
    std::printf("%s\n", j.str().c_str());
  }
  std::fflush(stdout);
}

void print_table(const std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& notes,
                 const char* title) {
  std::printf("%s — %s, %s\n", title, machine_description().c_str(), today().c_str());
  for (std::size_t i = 0; i < peaks.threads.size(); ++i) {
    std::printf("peak (measured now), %d thread(s): fp32 FMA %.0f GFLOP/s, bf16 dot %.0f GFLOP/s", peaks.threads[i],
                peaks.fma_f32[i], peaks.bf16_dot[i]);
    if (!std::isnan(peaks.amx_bf16[i])) std::printf(", AMX bf16 %.0f GFLOP/s", peaks.amx_bf16[i]);
    std::printf("\n");
  }
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  std::printf("%-12s %-18s %-10s %-14s %3s %9s %8s %6s %6s %6s %6s %8s %6s %8s %6s %8s %6s  %s\n", "pass", "m,n,k",
              "dtype", "epilogue", "thr", "ms", "GFLOP/s", "%peak", "GB/s", "xcopy", "xread", "OpenBLAS", "x", "oneDNN",
              "x", "PyTorch", "x", "kernel");
  for (const BenchRow& r : rows) {
    char shape[64];
    std::snprintf(shape, sizeof(shape), "%lld,%lld,%lld", static_cast<long long>(r.shape.m),
                  static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k));
    // A peer that was not measured shows as "-" (not nan).
    auto peer_cells = [&](double peer_gflops) {
      char cells[32] = "       -      -";
      if (!std::isnan(peer_gflops))
        std::snprintf(cells, sizeof(cells), "%8.1f %6.2f", peer_gflops, r.gflops / peer_gflops);
      return std::string(cells);
    };
    // GB/s and its fractions of the copy and read ceilings (memory-bound rows).
    char memory[48] = "     -      -      -";
    if (r.bytes > 0.0) {
      const double gbps = r.bytes / (r.ms * 1e6);
      std::snprintf(memory, sizeof(memory), "%6.1f %6.2f %6.2f", gbps, gbps / r.copy_gbps, gbps / r.read_gbps);
    }
    std::printf("%-12s %-18s %-10s %-14s %3d %9.3f %8.1f %5.0f%% %s %s %s %s  %s\n",
                r.op == "linear" ? r.pass.c_str() : (op_pair_name(r.shape.op_a, r.shape.op_b)).c_str(), shape,
                r.dm.name().c_str(), epilogue_name(r.epilogue), r.threads, r.ms, r.gflops, 100.0 * r.gflops / r.peak,
                memory, peer_cells(r.openblas_gflops).c_str(), peer_cells(r.onednn_gflops).c_str(),
                peer_cells(r.torch_gflops).c_str(), r.kernel.c_str());
  }
}

}  // namespace ampkit::tools::bench
