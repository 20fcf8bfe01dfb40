// Shared parts of `ampkit bench gemm` / `bench linear` (see bench_gemm_common.hpp): parsing,
// peaks, the peer phases and the output rows. Tools layer.
#include "tools/ampkit/bench_gemm_common.hpp"

#include <cctype>
#include <cstdio>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/bench_peak.hpp"

namespace ampkit::tools::bench {
namespace {

constexpr Epilogue kAllEpilogues[] = {
    Epilogue::DEFAULT,  Epilogue::BIAS,        Epilogue::RELU,          Epilogue::RELU_BIAS,
    Epilogue::RELU_AUX, Epilogue::RELU_AUX_BIAS, Epilogue::GELU,        Epilogue::GELU_BIAS,
    Epilogue::GELU_AUX, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU,       Epilogue::DGELU_BGRAD,
    Epilogue::DRELU,    Epilogue::DRELU_BGRAD,  Epilogue::BGRADA,       Epilogue::BGRADB};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The oneDNN matmul closest to a row: same dtype (f16 exact/flush -> f32, f16 alt -> bf16, the
// arithmetic they do), bias / bias + gelu_tanh post-ops for the forward epilogues, none else.
struct OnednnKey {
  PeerShape shape;
  DType dtype;
  OnednnPostOp post;
  int threads;
  bool operator==(const OnednnKey&) const = default;
};

OnednnKey onednn_key(const BenchRow& r) {
  DType t = r.dm.dtype;
  if (t == DType::f16) t = r.dm.mode == Fp16Mode::alt ? DType::bf16 : DType::f32;
  OnednnPostOp post = OnednnPostOp::none;
  if (r.epilogue == Epilogue::BIAS) post = OnednnPostOp::bias;
  if (r.epilogue == Epilogue::GELU_AUX_BIAS || r.epilogue == Epilogue::GELU_BIAS)
    post = OnednnPostOp::bias_gelu_tanh;
  return {r.shape, t, post, r.threads};
}

std::string onednn_name(const OnednnKey& k) {
  std::string s = std::string("onednn_matmul_") + std::string(dtype_name(k.dtype));
  if (k.post == OnednnPostOp::bias) s += "+bias";
  if (k.post == OnednnPostOp::bias_gelu_tanh) s += "+bias+gelu_tanh(no aux)";
  return s;
}

}  // namespace

std::string DtypeMode::name() const {
  std::string s(dtype_name(dtype));
  if (dtype == DType::f16) s += std::string(":") + fp16_mode_name(mode);
  return s;
}

const char* fp16_mode_name(Fp16Mode mode) {
  return mode == Fp16Mode::exact ? "exact" : mode == Fp16Mode::flush ? "flush" : "alt";
}

std::vector<DtypeMode> parse_dtype_modes(const std::string& text, const char* command) {
  std::vector<DtypeMode> out;
  for (const std::string& item : split_list(text)) {
    const std::size_t colon = item.find(':');
    const DType t = parse_dtype(item.substr(0, colon), "--dtype");
    if (colon == std::string::npos) {
      if (t == DType::f16)
        for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) out.push_back({t, m});
      else
        out.push_back({t, Fp16Mode::exact});
      continue;
    }
    const std::string mode = item.substr(colon + 1);
    if (t != DType::f16) fail(command, "--dtype: only f16 takes a mode, but got '", item, "'");
    if (mode == "exact") out.push_back({t, Fp16Mode::exact});
    else if (mode == "flush") out.push_back({t, Fp16Mode::flush});
    else if (mode == "alt") out.push_back({t, Fp16Mode::alt});
    else fail(command, "--dtype: fp16 mode must be exact, flush or alt, but got '", mode, "'");
  }
  if (out.empty()) fail(command, "--dtype expects at least one dtype");
  return out;
}

const char* epilogue_name(Epilogue e) {
  static const char* const names[] = {"DEFAULT",  "BIAS",      "RELU",          "RELU_BIAS",
                                      "RELU_AUX", "RELU_AUX_BIAS", "GELU",      "GELU_BIAS",
                                      "GELU_AUX", "GELU_AUX_BIAS", "DGELU",     "DGELU_BGRAD",
                                      "DRELU",    "DRELU_BGRAD", "BGRADA",      "BGRADB"};
  return names[static_cast<int>(e)];
}

std::vector<Epilogue> parse_epilogues(const std::string& text, const char* command) {
  std::vector<Epilogue> out;
  for (const std::string& item : split_list(text)) {
    bool found = false;
    for (Epilogue e : kAllEpilogues)
      if (upper(item) == epilogue_name(e)) {
        out.push_back(e);
        found = true;
      }
    if (!found) fail(command, "--epilogue: unknown epilogue '", item, "' (e.g. DEFAULT, BIAS, GELU_AUX_BIAS, DGELU_BGRAD, BGRADB)");
  }
  if (out.empty()) fail(command, "--epilogue expects at least one name");
  return out;
}

Peaks Peaks::measure(const std::vector<int>& threads, int reps) {
  Peaks p;
  p.threads = threads;
  for (int t : threads) {
    p.fma_f32.push_back(measure_peak_gflops(PeakKind::fma_f32, t, reps));
    p.bf16_dot.push_back(measure_peak_gflops(PeakKind::dpbf16, t, reps));
  }
  return p;
}

void Peaks::remeasure_keep_max(int reps) {
  const Peaks again = measure(threads, reps);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!(fma_f32[i] >= again.fma_f32[i])) fma_f32[i] = again.fma_f32[i];
    if (!(bf16_dot[i] >= again.bf16_dot[i])) bf16_dot[i] = again.bf16_dot[i];
  }
}

double Peaks::for_case(const DtypeMode& dm, int t, const char** name) const {
  const bool bf16 = dm.dtype == DType::bf16 || (dm.dtype == DType::f16 && dm.mode == Fp16Mode::alt);
  *name = peak_name(bf16 ? PeakKind::dpbf16 : PeakKind::fma_f32);
  for (std::size_t i = 0; i < threads.size(); ++i)
    if (threads[i] == t) return bf16 ? bf16_dot[i] : fma_f32[i];
  return std::nan("");
}

RunSettings parse_run_settings(const Options& opt, bool quick, const char* command) {
  RunSettings s;
  s.threads = opt.common().threads;
  if (s.threads.empty()) s.threads = quick ? std::vector<int>{1} : std::vector<int>{1, 2};
  const std::string peers_text = opt.value_or("--peers", "openblas,onednn");
  if (peers_text != "none") s.peers = split_list(peers_text);
  for (const std::string& p : s.peers)
    if (p != "openblas" && p != "onednn")
      fail(command, "--peers: unknown peer '", p, "' (openblas, onednn, none)");
  s.measure.min_samples = opt.common().reps > 0 ? opt.common().reps : (quick ? 3 : 5);
  s.measure.min_total_ms = quick ? 30.0 : 200.0;
  s.measure.warmup_calls = quick ? 1 : 2;
  return s;
}

double gemm_gflops(const PeerShape& s, double ms) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (ms * 1e6);
}

void attach_peers(std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& peers,
                  const MeasureOptions& options, std::vector<std::string>& notes) {
  auto wanted = [&](const char* p) {
    for (const std::string& q : peers)
      if (q == p) return true;
    return false;
  };
  for (BenchRow& r : rows) r.peak = peaks.for_case(r.dm, r.threads, &r.peak_name);

  // Phase 1: OpenBLAS sgemm, one child process per thread count, every distinct shape.
  if (wanted("openblas")) {
    std::vector<int> thread_counts;
    for (const BenchRow& r : rows) {
      bool seen = false;
      for (int t : thread_counts) seen = seen || t == r.threads;
      if (!seen) thread_counts.push_back(r.threads);
    }
    for (int t : thread_counts) {
      std::vector<PeerShape> shapes;
      for (const BenchRow& r : rows) {
        if (r.threads != t) continue;
        bool seen = false;
        for (const PeerShape& s : shapes) seen = seen || s == r.shape;
        if (!seen) shapes.push_back(r.shape);
      }
      std::string note;
      const std::vector<PeerPoint> points =
          run_openblas_peer(shapes, t, options.min_samples, options.min_total_ms, note);
      if (!note.empty()) notes.push_back(note + " (" + std::to_string(t) + " thread(s))");
      for (BenchRow& r : rows)
        for (const PeerPoint& p : points)
          if (r.threads == t && p.shape == r.shape) r.openblas_gflops = p.gflops;
    }
  }
  // Phase 2: oneDNN matmul, in this process, after the OpenBLAS child has exited.
  if (wanted("onednn")) {
    notes.push_back("oneDNN is compared in the same arithmetic: f16 exact/flush rows with its f32 "
                    "matmul, f16 alt rows with its bf16 matmul; epilogues it lacks (DGELU_BGRAD, "
                    "BGRADB) with its plain matmul");
    if (!onednn_available()) {
      notes.push_back("oneDNN peer not built (install libdnnl-dev and re-run cmake)");
    } else {
      std::vector<OnednnKey> keys;
      std::vector<double> gflops;
      for (BenchRow& r : rows) {
        const OnednnKey k = onednn_key(r);
        std::size_t i = 0;
        while (i < keys.size() && !(keys[i] == k)) ++i;
        if (i == keys.size()) {
          std::string note;
          const PeerPoint p = onednn_matmul_time(k.shape, k.dtype, k.post, k.threads, options, note);
          keys.push_back(k);
          gflops.push_back(p.gflops);
          bool seen = false;
          for (const std::string& n : notes) seen = seen || n == note;
          if (!seen && !note.empty()) notes.push_back(note);
        }
        r.onednn_gflops = gflops[i];
        r.onednn_what = onednn_name(k);
      }
    }
  }
}

void print_rows(const std::vector<BenchRow>& rows, const Peaks& peaks,
                const std::vector<std::string>& notes, bool json, const char* title) {
  if (json) {
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
      const bool ob = !std::isnan(r.openblas_gflops), od = !std::isnan(r.onednn_gflops);
      if (ob || od) {
        const bool use_od = od && (!ob || r.onednn_gflops > r.openblas_gflops);
        const double g = use_od ? r.onednn_gflops : r.openblas_gflops;
        j.add("peer", use_od ? r.onednn_what : std::string("openblas_sgemm"));
        j.add("peer_gflops", g).add("ratio_to_peer", r.gflops / g);
      }
      if (ob) j.add("openblas_gflops", r.openblas_gflops).add("ratio_to_openblas", r.gflops / r.openblas_gflops);
      if (od) {
        j.add("onednn", r.onednn_what);
        j.add("onednn_gflops", r.onednn_gflops).add("ratio_to_onednn", r.gflops / r.onednn_gflops);
      }
      j.add("kernel", r.kernel);
      std::printf("%s\n", j.str().c_str());
    }
    std::fflush(stdout);
    return;
  }
  std::printf("%s — %s, %s\n", title, machine_description().c_str(), today().c_str());
  for (std::size_t i = 0; i < peaks.threads.size(); ++i)
    std::printf("peak (measured now), %d thread(s): fp32 FMA %.0f GFLOP/s, bf16 dot %.0f GFLOP/s\n",
                peaks.threads[i], peaks.fma_f32[i], peaks.bf16_dot[i]);
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  std::printf("%-12s %-18s %-10s %-14s %3s %9s %8s %6s %8s %6s %8s %6s  %s\n", "pass", "m,n,k", "dtype",
              "epilogue", "thr", "ms", "GFLOP/s", "%peak", "OpenBLAS", "x", "oneDNN", "x", "kernel");
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
    std::printf("%-12s %-18s %-10s %-14s %3d %9.3f %8.1f %5.0f%% %s %s  %s\n",
                r.op == "linear" ? r.pass.c_str() : (op_pair_name(r.shape.op_a, r.shape.op_b)).c_str(),
                shape, r.dm.name().c_str(), epilogue_name(r.epilogue), r.threads, r.ms, r.gflops,
                100.0 * r.gflops / r.peak, peer_cells(r.openblas_gflops).c_str(),
                peer_cells(r.onednn_gflops).c_str(), r.kernel.c_str());
  }
}

}  // namespace ampkit::tools::bench
