// The peer phases of `ampkit bench gemm` / `bench linear` (tools layer, bench/): OpenBLAS per
// thread count in its own process, then oneDNN matmul in this one, never interleaved with each
// other or with ampkit's cases. See gemm_peer_phases.hpp.
#include "tools/ampkit/bench/gemm_peer_phases.hpp"

#include <algorithm>

#include "tools/ampkit/bench/peers/onednn_matmul.hpp"
#include "tools/ampkit/bench/peers/openblas_peer.hpp"
#include "tools/ampkit/bench/peers/torch_gemm_peer.hpp"

namespace ampkit::tools::bench {
namespace {

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
  if (r.epilogue == Epilogue::GELU_AUX_BIAS || r.epilogue == Epilogue::GELU_BIAS) post = OnednnPostOp::bias_gelu_tanh;
  return {r.shape, t, post, r.threads};
}

std::string onednn_name(const OnednnKey& k) {
  std::string s = std::string("onednn_matmul_") + std::string(dtype_name(k.dtype));
  if (k.post == OnednnPostOp::bias) s += "+bias";
  if (k.post == OnednnPostOp::bias_gelu_tanh) s += "+bias+gelu_tanh(no aux)";
  return s;
}

// The rows' thread counts, each once, in order of first appearance.
std::vector<int> distinct_thread_counts(const std::vector<BenchRow>& rows) {
  std::vector<int> counts;
  for (const BenchRow& r : rows)
    if (std::find(counts.begin(), counts.end(), r.threads) == counts.end()) counts.push_back(r.threads);
  return counts;
}

// Phase 1: OpenBLAS sgemm, one child process per thread count, every distinct shape.
void openblas_phase(std::vector<BenchRow>& rows, const MeasureOptions& options, std::vector<std::string>& notes) {
  for (int t : distinct_thread_counts(rows)) {
    std::vector<PeerShape> shapes;
    for (const BenchRow& r : rows) {
      if (r.threads != t) continue;
      bool seen = false;
      for (const PeerShape& s : shapes) seen = seen || s == r.shape;
      if (!seen) shapes.push_back(r.shape);
    }
    std::string note;
    const std::vector<PeerPoint> points = run_openblas_peer(shapes, t, options.min_samples, options.min_total_ms, note);
    if (!note.empty()) notes.push_back(note + " (" + std::to_string(t) + " thread(s))");
    for (BenchRow& r : rows)
      for (const PeerPoint& p : points)
        if (r.threads == t && p.shape == r.shape) r.openblas_gflops = p.gflops;
  }
}

// Phase 2: oneDNN matmul, in this process, after the OpenBLAS child has exited; each distinct
// (shape, dtype, post-op, threads) measured once.
void onednn_phase(std::vector<BenchRow>& rows, const MeasureOptions& options, std::vector<std::string>& notes) {
  notes.push_back(
      "oneDNN is compared in the same arithmetic: f16 exact/flush rows with its f32 "
      "matmul, f16 alt rows with its bf16 matmul; epilogues it lacks (DGELU_BGRAD, "
      "BGRADB) with its plain matmul");
  if (!onednn_available()) {
    notes.push_back("oneDNN peer not built (install libdnnl-dev and re-run cmake)");
    return;
  }
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

// The case PyTorch runs for a row: f16 exact/flush as f32 and f16 alt as bf16 (the arithmetic
// they do, as for oneDNN); the epilogues bench/torch_gemm_cpu.py spells, others as the plain product.
TorchGemmCase torch_case(const BenchRow& r) {
  DType t = r.dm.dtype;
  if (t == DType::f16) t = r.dm.mode == Fp16Mode::alt ? DType::bf16 : DType::f32;
  const Epilogue e = r.epilogue;
  const bool spelled = e == Epilogue::DEFAULT || e == Epilogue::BIAS || e == Epilogue::GELU_AUX_BIAS ||
                       e == Epilogue::DGELU_BGRAD || e == Epilogue::BGRADA || e == Epilogue::BGRADB;
  return {r.shape, std::string(dtype_name(t)), spelled ? epilogue_name(e) : "DEFAULT"};
}

// Phase 3: PyTorch, one child Python per thread count, after the other peers; each distinct case
// once.
void torch_phase(std::vector<BenchRow>& rows, const MeasureOptions& options, std::vector<std::string>& notes) {
  std::string version;
  for (int t : distinct_thread_counts(rows)) {
    std::vector<TorchGemmCase> cases;
    for (const BenchRow& r : rows) {
      if (r.threads != t) continue;
      const TorchGemmCase c = torch_case(r);
      bool seen = false;
      for (const TorchGemmCase& q : cases) seen = seen || q == c;
      if (!seen) cases.push_back(c);
    }
    std::string why;
    const std::vector<double> g =
        run_torch_gemm_peer(cases, t, options.min_samples, options.min_total_ms, version, why);
    if (!why.empty()) {
      notes.push_back("PyTorch peer: " + why);
      if (why.rfind("PyTorch not importable", 0) == 0) return;
    }
    for (BenchRow& r : rows) {
      if (r.threads != t) continue;
      const TorchGemmCase c = torch_case(r);
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (cases[i] == c) {
          r.torch_gflops = g[i];
          r.torch_what = "torch " + version + " " + c.dtype + " " + c.epilogue;
        }
    }
  }
  if (!version.empty())
    notes.push_back("PyTorch " + version +
                    " (bench/torch_gemm_cpu.py, own process): the same layouts and threads; f16 exact/flush rows "
                    "as f32, f16 alt as bf16; epilogues as separate ops (addmm, gelu, gelu_backward, sum)");
}

}  // namespace

void attach_peers(std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& peers,
                  const MeasureOptions& options, std::vector<std::string>& notes) {
  auto wanted = [&](const char* p) {
    for (const std::string& q : peers)
      if (q == p) return true;
    return false;
  };
  for (BenchRow& r : rows) r.peak = peaks.for_case(r.dm, r.kernel, r.threads, &r.peak_name);
  if (wanted("openblas")) openblas_phase(rows, options, notes);
  if (wanted("onednn")) onednn_phase(rows, options, notes);
  if (wanted("torch")) torch_phase(rows, options, notes);
}

}  // namespace ampkit::tools::bench
