// `ampkit bench linear` (tools layer): the Linear layer's passes through its public API —
// forward with bias (BIAS) and with bias + GELU saving the pre-activation (GELU_AUX_BIAS),
// backward dx fused with the layer below's GELU gradient and bias gradient (DGELU_BGRAD) and
// dw with db (BGRADB) — on transformer-like shapes (batch x in -> out), as GFLOP/s, a fraction
// of the peak measured in the same run, and ratios to OpenBLAS sgemm / oneDNN matmul of the same
// GEMM (each in its own process / phase).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/core/threading.hpp"
#include "tools/ampkit/bench_gemm_common.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {
namespace {

using namespace bench;

constexpr const char* kCommand = "bench linear";
constexpr const char* kAllPasses = "forward,forward_gelu,backward_dx,backward_dw";

void print_help() {
  std::printf(
      "usage: ampkit bench linear [options]\n"
      "  --shapes BxIxO,...   batch x in -> out; default 2048x768x3072 (MLP up), 2048x3072x768\n"
      "                       (MLP down), 2048x768x2304 (QKV), 2048x1024x4096, 16x4096x4096\n"
      "  --dtype LIST         f32,bf16,f16 (f16 = every fp16 mode, or f16:exact/flush/alt)\n"
      "  --pass LIST          forward (BIAS), forward_gelu (GELU_AUX_BIAS), backward_dx\n"
      "                       (DGELU_BGRAD of the layer below), backward_dw (BGRADB); default all\n"
      "  --peers LIST         openblas,onednn (default) or none\n"
      "  --threads 1,2  --reps N  --quick  --json\n"
      "x, w, y, dy, dx, dw, aux in the dtype; bias, db, below_db f32. GFLOP/s = 2 batch in out / s.\n");
}

struct LinearShape {
  std::int64_t batch, in, out;
};

std::vector<LinearShape> parse_shapes(const std::string& text) {
  std::vector<LinearShape> out;
  for (const std::string& item : split_list(text)) {
    const std::vector<std::string> parts = split_list(item, 'x');
    if (parts.size() != 3) fail(kCommand, "--shapes expects BATCHxINxOUT items, but got '", item, "'");
    out.push_back({parse_int(parts[0], kCommand, "--shapes", 1, 1 << 20),
                   parse_int(parts[1], kCommand, "--shapes", 1, 1 << 20),
                   parse_int(parts[2], kCommand, "--shapes", 1, 1 << 20)});
  }
  return out;
}

void fill(void* data, DType t, std::int64_t n, std::uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (t == DType::f32) static_cast<float*>(data)[i] = v;
    else if (t == DType::bf16) static_cast<std::uint16_t*>(data)[i] = float_to_bf16_bits(v);
    else static_cast<std::uint16_t*>(data)[i] = float_to_half_bits(v);
  }
}

}  // namespace

int run_bench_linear(const Args& args) {
  const Options opt(args, kCommand, {{"--shapes", true}, {"--dtype", true}, {"--pass", true}, {"--peers", true}});
  if (opt.common().help) {
    print_help();
    return 0;
  }
  const bool quick = opt.common().quick;
  const std::vector<LinearShape> shapes = parse_shapes(opt.value_or(
      "--shapes", quick ? "256x768x3072,16x768x768"
                        : "2048x768x3072,2048x3072x768,2048x768x2304,2048x1024x4096,16x4096x4096"));
  const std::vector<DtypeMode> dtypes =
      parse_dtype_modes(opt.value_or("--dtype", quick ? "f32,bf16" : "f32,bf16,f16"), kCommand);
  const std::vector<std::string> passes = split_list(opt.value_or("--pass", kAllPasses));
  for (const std::string& p : passes)
    if (p != "forward" && p != "forward_gelu" && p != "backward_dx" && p != "backward_dw")
      fail(kCommand, "--pass: unknown pass '", p, "' (expected some of ", kAllPasses, ")");
  const RunSettings settings = parse_run_settings(opt, quick, kCommand);
  const std::vector<int>& threads = settings.threads;
  const std::vector<std::string>& peers = settings.peers;
  const MeasureOptions& measure_options = settings.measure;

  Peaks peaks = Peaks::measure(threads, quick ? 3 : 5);

  // Buffers for the largest shape, 4 bytes per element; allocated and touched once.
  std::int64_t max_x = 1, max_w = 1, max_y = 1, max_vec = 1;
  int touch = 1;
  for (const LinearShape& s : shapes) {
    max_x = std::max(max_x, s.batch * s.in);
    max_w = std::max(max_w, s.out * s.in);
    max_y = std::max(max_y, s.batch * s.out);
    max_vec = std::max({max_vec, s.in, s.out});
  }
  for (int t : threads) touch = std::max(touch, t);
  auto buffer = [&](std::int64_t n) { return AlignedBuffer(static_cast<std::size_t>(n) * 4, touch); };
  AlignedBuffer x = buffer(max_x), w = buffer(max_w), bias = buffer(max_vec), y = buffer(max_y),
                aux = buffer(max_y), dy = buffer(max_y), dx = buffer(max_x), below_aux = buffer(max_x),
                below_db = buffer(max_vec), dw = buffer(max_w), db = buffer(max_vec);
  fill(bias.data(), DType::f32, max_vec, 4, 0.5f);

  std::vector<BenchRow> rows;
  std::vector<std::string> notes;
  const int saved_threads = num_threads();
  for (const DtypeMode& dm : dtypes) {
    const DType t = dm.dtype;
    fill(x.data(), t, max_x, 1, 1.0f);
    fill(w.data(), t, max_w, 2, 0.05f);
    fill(dy.data(), t, max_y, 3, 1.0f);
    fill(below_aux.data(), t, max_x, 5, 2.0f);
    for (const LinearShape& s : shapes)
      for (const std::string& pass : passes)
        for (int th : threads) {
          BenchRow r;
          r.op = "linear";
          r.pass = pass;
          r.batch = s.batch;
          r.in = s.in;
          r.out = s.out;
          r.dm = dm;
          r.threads = th;
          LinearForwardArgs f;
          LinearBackwardArgs g;
          const bool forward = pass == "forward" || pass == "forward_gelu";
          if (forward) {
            f.x = TensorView(x.data(), t, {s.batch, s.in});
            f.w = TensorView(w.data(), t, {s.out, s.in});
            f.bias = TensorView(bias.data(), DType::f32, {s.out});
            f.y = TensorView(y.data(), t, {s.batch, s.out});
            f.fp16_mode = dm.mode;
            if (pass == "forward_gelu") {
              f.gelu = true;
              f.aux = TensorView(aux.data(), t, {s.batch, s.out});
            }
            // The GEMM of the forward: m = out, n = batch, k = in, op(A) = Wᵀ.
            r.shape = {s.out, s.batch, s.in, Op::T, Op::N};
            r.epilogue = f.gelu ? Epilogue::GELU_AUX_BIAS : Epilogue::BIAS;
            r.kernel = linear_kernel_name(f);
          } else {
            g.dy = TensorView(dy.data(), t, {s.batch, s.out});
            g.x = TensorView(x.data(), t, {s.batch, s.in});
            g.w = TensorView(w.data(), t, {s.out, s.in});
            g.fp16_mode = dm.mode;
            if (pass == "backward_dx") {
              g.dx = TensorView(dx.data(), t, {s.batch, s.in});
              g.below_gelu = true;
              g.below_aux = TensorView(below_aux.data(), t, {s.batch, s.in});
              g.below_db = TensorView(below_db.data(), DType::f32, {s.in});
              // dX GEMM: m = in, n = batch, k = out.
              r.shape = {s.in, s.batch, s.out, Op::N, Op::N};
              r.epilogue = Epilogue::DGELU_BGRAD;
            } else {
              g.dw = TensorView(dw.data(), t, {s.out, s.in});
              g.db = TensorView(db.data(), DType::f32, {s.out});
              // dW GEMM: m = in, n = out, k = batch, op(B) = dYᵀ.
              r.shape = {s.in, s.out, s.batch, Op::N, Op::T};
              r.epilogue = Epilogue::BGRADB;
            }
          }
          set_num_threads(th);
          const Measurement m = forward ? measure([&] { linear_forward(f); }, measure_options)
                                        : measure([&] { linear_backward(g); }, measure_options);
          r.ms = m.median_ms;
          r.gflops = gemm_gflops(r.shape, m.median_ms);
          rows.push_back(r);
          if (!opt.common().json)
            std::fprintf(stderr, "  measured %s %s %lldx%lldx%lld %d thread(s): %.1f GFLOP/s\n", dm.name().c_str(),
                         pass.c_str(), static_cast<long long>(s.batch), static_cast<long long>(s.in),
                         static_cast<long long>(s.out), th, r.gflops);
        }
  }
  set_num_threads(saved_threads);
  peaks.remeasure_keep_max(quick ? 3 : 5);
  attach_peers(rows, peaks, peers, measure_options, notes);
  notes.push_back("oneDNN's gelu_tanh post-op does not save the pre-activation (ampkit's forward_gelu writes aux too)");
  print_rows(rows, peaks, notes, opt.common().json, "ampkit bench linear");
  return 0;
}

}  // namespace ampkit::tools
