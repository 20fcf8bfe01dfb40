// `ampkit info` (tools layer): what this machine supports and what ampkit will use — CPU
// features, the active ISA (AMPKIT_ISA caps it), threads — and with --kernels, the kernel each
// op's list offers for a few representative problems, with why each entry declines or takes it.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/version.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/build_info.hpp"

namespace ampkit::tools {
namespace {

void print_machine() {
  std::printf("ampkit: %s (commit %s)\n", AMPKIT_VERSION, build_commit());
  const CpuFeatures& f = cpu_features();
  std::printf("cpu: avx2+fma+f16c=%s avx512(f,bw,dq,vl)=%s avx512_bf16=%s avx512_fp16=%s amx_bf16=%s\n",
              f.avx2 ? "yes" : "no", f.avx512 ? "yes" : "no", f.avx512bf16 ? "yes" : "no", f.avx512fp16 ? "yes" : "no",
              f.amx_bf16 ? "yes" : "no");
  // The tile-data permission is asked for only where AMX could run (it is per process).
  if (f.amx_bf16 && active_isa() == Isa::amx)
    std::printf("amx tile data (arch_prctl): %s\n", amx_tile_data_permitted() ? "granted" : "refused");
  std::printf("isa: best=%s active=%s (AMPKIT_ISA caps it)\n", isa_name(f.best()).data(),
              isa_name(active_isa()).data());
  const CpuCaches& c = f.caches;
  std::printf("caches (%s): L1d %lld KiB, L2 %lld KiB (shared by %d), L3 %lld KiB (shared by %d)\n", c.source,
              static_cast<long long>(c.l1d / 1024), static_cast<long long>(c.l2 / 1024), c.l2_sharing,
              static_cast<long long>(c.l3 / 1024), c.l3_sharing);
  std::printf("threads: %d\n", num_threads());
}

// One problem and every entry of its op's kernel list: the selected one marked with '*', the
// others with the reason they decline it (or "takes it too" after the selected one).
void print_statuses(const std::string& problem, const std::vector<KernelStatus>& statuses) {
  std::printf("  %s\n", problem.c_str());
  bool after = false;
  for (const KernelStatus& k : statuses) {
    const std::string why = k.selected            ? "selected"
                            : !k.declined.empty() ? "declines: " + k.declined
                            : after               ? "takes it too"
                                                  : "";
    std::printf("    %c %-36s %s\n", k.selected ? '*' : ' ', k.name.c_str(), why.c_str());
    after = after || k.selected;
  }
}

// The statuses of gemm for D (m x n) = A B, all operands in `dtype`, DEFAULT epilogue. The
// queries validate the arguments but read no element: the buffers are never touched.
std::vector<KernelStatus> gemm_statuses(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype, Fp16Mode mode) {
  const auto size = static_cast<std::size_t>(dtype_size(dtype));
  std::vector<unsigned char> a(static_cast<std::size_t>(m * k) * size), b(static_cast<std::size_t>(k * n) * size),
      d(static_cast<std::size_t>(m * n) * size);
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a.data(), g.a_dtype = dtype, g.lda = m;
  g.b = b.data(), g.b_dtype = dtype, g.ldb = k;
  g.d = d.data(), g.d_dtype = dtype, g.ldd = m;
  g.fp16_mode = mode;
  return gemm_kernel_statuses(g);
}

void print_gemm_kernels() {
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
    for (const auto& s : shapes)
      print_statuses("gemm " + std::string(c.label) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
                         std::to_string(s[2]) + " nn DEFAULT",
                     gemm_statuses(s[0], s[1], s[2], c.dtype, c.mode));
}

void print_norm_kernels() {
  struct NormMix {
    const char* label;
    DType x, param;
  };
  const NormMix mixes[] = {{"f32", DType::f32, DType::f32},
                           {"bf16", DType::bf16, DType::bf16},
                           {"bf16 x, f32 params", DType::bf16, DType::f32},
                           {"f16", DType::f16, DType::f16},
                           {"f16 x, f32 params", DType::f16, DType::f32}};
  // 4 rows of 768 in f32-sized storage fit every mix; the queries read no element.
  constexpr std::int64_t rows = 4, n = 768;
  std::vector<float> x(rows * n), dy(rows * n), y(rows * n), dx(rows * n), g(n), dg(n), st(rows);
  for (const NormKind kind : {NormKind::layer, NormKind::rms})
    for (const bool backward : {false, true})
      for (const NormMix& m : mixes) {
        const TensorView xv(x.data(), m.x, {rows, n}), gv(g.data(), m.param, {n}), stv(st.data(), DType::f32, {rows});
        std::vector<KernelStatus> statuses;
        if (backward) {
          NormBackwardArgs a;
          a.dy = TensorView(dy.data(), m.x, {rows, n});
          a.x = xv, a.gamma = gv, a.rstd = stv, a.dx = TensorView(dx.data(), m.x, {rows, n});
          if (kind == NormKind::layer) a.mean = stv;
          a.dgamma = TensorView(dg.data(), m.param, {n});
          statuses = norm_kernel_statuses(kind, a);
        } else {
          NormForwardArgs a;
          a.x = xv, a.gamma = gv, a.y = TensorView(y.data(), m.x, {rows, n});
          statuses = norm_kernel_statuses(kind, a);
        }
        print_statuses(std::string(kind == NormKind::rms ? "rms_norm " : "layer_norm ") +
                           (backward ? "backward " : "forward ") + m.label + " 4x768",
                       statuses);
      }
}

void print_convert_kernels() {
  std::vector<float> src(1024), dst(1024);
  const DType types[] = {DType::f32, DType::bf16, DType::f16};
  for (DType from : types)
    for (DType to : types) {
      if (from == to) continue;
      print_statuses("convert " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) + " [1024]",
                     convert_kernel_statuses(TensorView(src.data(), from, {1024}), TensorView(dst.data(), to, {1024})));
    }
}

// Every op's list with the reason each entry cannot run on this machine now.
void print_all_lists() {
  std::printf("\nevery op's kernel list, best first ('*': the first entry this machine runs now):\n");
  for (const KernelList& list : kernel_lists()) {
    std::printf("  %s%s\n", list.op.c_str(), list.device == Device::cuda ? " (cuda)" : "");
    for (const KernelStatus& k : list.kernels)
      std::printf("    %c %-36s %s\n", k.selected ? '*' : ' ', k.name.c_str(),
                  k.declined.empty() ? "" : ("unavailable: " + k.declined).c_str());
  }
}

void print_kernels() {
  print_all_lists();
  std::printf("\nper-problem choices, where entries also decline problems ('*': the one a call runs now):\n");
  print_gemm_kernels();
  print_norm_kernels();
  print_convert_kernels();
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
