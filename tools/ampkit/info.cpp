// `ampkit info` (tools layer): what this machine supports and what ampkit will use — CPU
// features, the active ISA (AMPKIT_ISA caps it), threads — and with --kernels, the kernel each
// op selects for a few representative problems, now, on this machine.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {
namespace {

void print_machine() {
  const CpuFeatures& f = cpu_features();
  std::printf("cpu: avx2+fma+f16c=%s avx512(f,bw,dq,vl)=%s avx512_bf16=%s avx512_fp16=%s\n", f.avx2 ? "yes" : "no",
              f.avx512 ? "yes" : "no", f.avx512bf16 ? "yes" : "no", f.avx512fp16 ? "yes" : "no");
  std::printf("isa: best=%s active=%s (AMPKIT_ISA caps it)\n", isa_name(f.best()).data(),
              isa_name(active_isa()).data());
  std::printf("threads: %d\n", num_threads());
}

// Operand memory for the GEMM queries: allocated, never touched (the queries validate the
// arguments but read no element).
struct Untouched {
  std::unique_ptr<unsigned char[]> bytes;
  explicit Untouched(std::int64_t n) : bytes(new unsigned char[static_cast<std::size_t>(n)]) {}
};

// The kernel gemm would select for D (m x n) = A B, all operands in `dtype`, DEFAULT epilogue.
std::string gemm_kernel(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype, Fp16Mode mode) {
  const auto size = static_cast<std::int64_t>(dtype_size(dtype));
  const Untouched a(m * k * size), b(k * n * size), d(m * n * size);
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a.bytes.get(), g.a_dtype = dtype, g.lda = m;
  g.b = b.bytes.get(), g.b_dtype = dtype, g.ldb = k;
  g.d = d.bytes.get(), g.d_dtype = dtype, g.ldd = m;
  g.fp16_mode = mode;
  try {
    return gemm_kernel_name(g);
  } catch (const Error& e) {
    return std::string("(none: ") + e.what() + ")";
  }
}

// TODO(kernel_statuses): when gemm_kernel_statuses / norm_kernel_statuses land on main, print
// every entry of each list with the reason it declines (src/ops/kernel_registry.hpp), not only
// the one selected.
void print_kernels() {
  std::printf("\nkernels selected now (the first entry of each op's list that takes the problem):\n");
  struct GemmCase {
    const char* label;
    DType dtype;
    Fp16Mode mode;
  };
  const GemmCase dtypes[] = {{"f32", DType::f32, Fp16Mode::exact},
                             {"bf16", DType::bf16, Fp16Mode::exact},
                             {"f16:exact", DType::f16, Fp16Mode::exact},
                             {"f16:flush", DType::f16, Fp16Mode::flush},
                             {"f16:alt", DType::f16, Fp16Mode::alt}};
  const std::int64_t shapes[][3] = {{512, 512, 512}, {1, 4096, 4096}};
  for (const GemmCase& c : dtypes)
    for (const auto& s : shapes) {
      const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
      std::printf("  gemm       %-10s %-12s nn DEFAULT  %s\n", c.label, shape.c_str(),
                  gemm_kernel(s[0], s[1], s[2], c.dtype, c.mode).c_str());
    }
  struct NormMix {
    const char* label;
    DType x, param;
  };
  const NormMix mixes[] = {{"f32", DType::f32, DType::f32},
                           {"bf16", DType::bf16, DType::bf16},
                           {"mixed", DType::bf16, DType::f32},
                           {"f16", DType::f16, DType::f16},
                           {"mixed_f16", DType::f16, DType::f32}};
  // Norm kernels take the problem's views; 4 rows of 768 in f32-sized storage fit every mix.
  constexpr std::int64_t rows = 4, n = 768;
  std::vector<float> x(rows * n), dy(rows * n), y(rows * n), dx(rows * n), g(n), dg(n), st(rows);
  for (const NormKind kind : {NormKind::layer, NormKind::rms})
    for (const bool backward : {false, true})
      for (const NormMix& m : mixes) {
        const TensorView xv(x.data(), m.x, {rows, n}), gv(g.data(), m.param, {n}),
            stv(st.data(), DType::f32, {rows});
        const char* name = nullptr;
        if (backward) {
          NormBackwardArgs a;
          a.dy = TensorView(dy.data(), m.x, {rows, n});
          a.x = xv, a.gamma = gv, a.rstd = stv, a.dx = TensorView(dx.data(), m.x, {rows, n});
          if (kind == NormKind::layer) a.mean = stv;
          a.dgamma = TensorView(dg.data(), m.param, {n});
          name = norm_kernel_name(kind, a);
        } else {
          NormForwardArgs a;
          a.x = xv, a.gamma = gv, a.y = TensorView(y.data(), m.x, {rows, n});
          name = norm_kernel_name(kind, a);
        }
        std::printf("  %-10s %-8s %-10s %s\n", kind == NormKind::rms ? "rms_norm" : "layer_norm",
                    backward ? "backward" : "forward", m.label, name);
      }
}

}  // namespace

int run_info(const Args& args) {
  bool kernels = false;
  cli::OptionParser parser("info", "CPU features, the active ISA (AMPKIT_ISA caps it) and the thread count.");
  parser.flag("--kernels", &kernels, "also the kernel each op selects for representative problems");
  if (!parser.parse(args)) return 0;
  print_machine();
  if (kernels) print_kernels();
  return 0;
}

}  // namespace ampkit::tools
