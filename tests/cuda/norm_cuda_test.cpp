// CUDA LayerNorm/RMSNorm against the CPU (tests/cuda/): every dtype mix (f32; bf16; f16;
// bf16/f16 with f32 parameters), forward and backward, shapes from n = 1 to rows longer than the
// register cache, unaligned n, rows = 0; device views through the public calls, compared with the
// CPU on the same inputs (the backward from the same mean/rstd) within bounds from the dtypes and
// n; bits identical across two runs. Skips (saying why) without a usable GPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "ampkit/ops/norm.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

struct NormMix {
  const char* name;
  DType x, p;
};

struct NormShape {
  std::int64_t rows, n;
};

// Past {70, 768}: many rows a dgamma/dbeta group (1000 x 4096: 4 rows, 2000 x 1004: 2, unaligned
// for 16-bit x), 32 elements a thread (300 x 12288).
constexpr NormShape kNormShapes[] = {{1, 1},     {3, 7},    {5, 8},       {67, 64},     {33, 1000},  {40, 4104},
                                     {9, 20000}, {70, 768}, {1000, 4096}, {2000, 1004}, {300, 12288}};

TensorView view(HostArray& a, std::int64_t rows, std::int64_t n) { return TensorView(a.data(), a.t, {rows, n}); }
TensorView view(const DeviceArray& a, DType t, std::int64_t rows, std::int64_t n) {
  return TensorView(a.get(), t, {rows, n}, Device::cuda);
}
TensorView vec(HostArray& a, std::int64_t n) { return TensorView(a.data(), a.t, {n}); }
TensorView vec(const DeviceArray& a, DType t, std::int64_t n) { return TensorView(a.get(), t, {n}, Device::cuda); }

bool within(double got, double want, double bound) {
  return std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= bound;
}

int check_norm(const NormMix& mix, NormKind kind, NormShape s, std::mt19937_64& rng, std::uint64_t seed) {
  const bool rms = kind == NormKind::rms;
  const bool with_gamma = rng() % 4 != 0, with_beta = !rms && rng() % 3 != 0, accumulate = rng() % 2 == 0;
  const std::int64_t rows = s.rows, n = s.n;
  const std::string where = std::string(mix.name) + (rms ? " rms" : " layer") + " rows=" + std::to_string(rows) +
                            " n=" + std::to_string(n) + (with_gamma ? " gamma" : "") + (with_beta ? " beta" : "") +
                            " seed=" + std::to_string(seed);
  HostArray x(mix.x, rows * n), gamma(mix.p, n), beta(mix.p, n), y(mix.x, rows * n), mean(DType::f32, rows),
      rstd(DType::f32, rows), dy(mix.x, rows * n), dx(mix.x, rows * n), dgamma(mix.p, n), dbeta(mix.p, n);
  fill_random(x, rng, 2.0f, 4.0f);  // an offset: the two-pass variance must not cancel
  fill_random(gamma, rng, 0.5f, 1.5f);
  fill_random(beta, rng);
  fill_random(dy, rng);
  fill_random(dgamma, rng);
  fill_random(dbeta, rng);
  int bad = 0;
  const auto report = [&](const char* what, std::int64_t i, double got, double want, double bound) {
    if (within(got, want, bound)) return;
    if (++bad <= 3)
      ADD_FAILURE() << where << ": " << what << "[" << i << "] = " << got << ", want " << want << " (bound " << bound
                    << ")";
  };

  // Forward on the CPU and twice on the GPU.
  HostArray y_cpu = y, mean_cpu = mean, rstd_cpu = rstd;
  NormForwardArgs f;
  f.x = view(x, rows, n);
  if (with_gamma) f.gamma = vec(gamma, n);
  if (with_beta) f.beta = vec(beta, n);
  f.y = view(y_cpu, rows, n);
  if (!rms) f.mean = vec(mean_cpu, rows);
  f.rstd = vec(rstd_cpu, rows);
  rms ? rms_norm_forward(f) : layer_norm_forward(f);
  HostArray y_gpu[kRuns], mean_gpu[kRuns], rstd_gpu[kRuns];
  for (int run = 0; run < kRuns; ++run) {
    ReferenceOnly cuda_reference(run == kCudaReference);
    DeviceArray dx_in(x), dg(gamma), db(beta), dyv(y.bytes.size(), 0x7f), dm(mean.bytes.size(), 0x7f),
        dr(rstd.bytes.size(), 0x7f);
    NormForwardArgs g;
    g.x = view(dx_in, mix.x, rows, n);
    if (with_gamma) g.gamma = vec(dg, mix.p, n);
    if (with_beta) g.beta = vec(db, mix.p, n);
    g.y = view(dyv, mix.x, rows, n);
    if (!rms) g.mean = vec(dm, DType::f32, rows);
    g.rstd = vec(dr, DType::f32, rows);
    rms ? rms_norm_forward(g) : layer_norm_forward(g);
    y_gpu[run] = dyv.to_host(mix.x);
    mean_gpu[run] = dm.to_host(DType::f32);
    rstd_gpu[run] = dr.to_host(DType::f32);
  }
  if (y_gpu[0].bytes != y_gpu[1].bytes || rstd_gpu[0].bytes != rstd_gpu[1].bytes) {
    ADD_FAILURE() << where << ": two forward runs gave different bits";
    ++bad;
  }
  const double stat_tol = 2e-6 + 1e-9 * static_cast<double>(n);
  const double u = unit_roundoff(mix.x);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double mu = rms ? 0.0 : mean_cpu.get(r), rs = rstd_cpu.get(r);
    if (!rms) report("mean", r, mean_gpu[0].get(r), mu, stat_tol * 4.0);
    report("rstd", r, rstd_gpu[0].get(r), rs, stat_tol * rs);
    // The fast entry against the CUDA reference entry (the CPU reference on host copies).
    const int ref = kCudaReference;
    if (!rms) report("mean vs the CUDA reference", r, mean_gpu[0].get(r), mean_gpu[ref].get(r), stat_tol * 4.0);
    report("rstd vs the CUDA reference", r, rstd_gpu[0].get(r), rstd_gpu[ref].get(r), stat_tol * rs);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t i = r * n + j;
      const double gj = with_gamma ? gamma.get(j) : 1.0, bj = with_beta ? beta.get(j) : 0.0;
      const double xh = (x.get(i) - mu) * rs;
      const double bound = 2.0 * u * std::fabs(y_cpu.get(i)) +
                           stat_tol * (std::fabs(xh) + rs * std::fabs(mu) + 1.0) * std::fabs(gj) * 4.0 +
                           0x1p-24 * std::fabs(bj);
      report("y", i, y_gpu[0].get(i), y_cpu.get(i), bound);
      report("y vs the CUDA reference", i, y_gpu[0].get(i), y_gpu[ref].get(i), bound);
    }
  }

  // Backward from the CPU's mean and rstd on both devices.
  HostArray dx_cpu = dx, dgamma_cpu = dgamma, dbeta_cpu = dbeta;
  const bool want_dgamma = with_gamma && rng() % 3 != 0, want_dbeta = !rms && rng() % 3 != 0;
  NormBackwardArgs b;
  b.dy = view(dy, rows, n);
  b.x = view(x, rows, n);
  if (!rms) b.mean = vec(mean_cpu, rows);
  b.rstd = vec(rstd_cpu, rows);
  if (with_gamma) b.gamma = vec(gamma, n);
  b.dx = view(dx_cpu, rows, n);
  if (want_dgamma) b.dgamma = vec(dgamma_cpu, n);
  if (want_dbeta) b.dbeta = vec(dbeta_cpu, n);
  b.accumulate = accumulate;
  rms ? rms_norm_backward(b) : layer_norm_backward(b);
  HostArray dx_gpu[kRuns], dgamma_gpu[kRuns], dbeta_gpu[kRuns];
  for (int run = 0; run < kRuns; ++run) {
    ReferenceOnly cuda_reference(run == kCudaReference);
    DeviceArray ddy(dy), dxin(x), dm(mean_cpu), dr(rstd_cpu), dg(gamma), ddx(dx.bytes.size(), 0x7f), ddg(dgamma),
        ddb(dbeta);
    NormBackwardArgs g;
    g.dy = view(ddy, mix.x, rows, n);
    g.x = view(dxin, mix.x, rows, n);
    if (!rms) g.mean = vec(dm, DType::f32, rows);
    g.rstd = vec(dr, DType::f32, rows);
    if (with_gamma) g.gamma = vec(dg, mix.p, n);
    g.dx = view(ddx, mix.x, rows, n);
    if (want_dgamma) g.dgamma = vec(ddg, mix.p, n);
    if (want_dbeta) g.dbeta = vec(ddb, mix.p, n);
    g.accumulate = accumulate;
    rms ? rms_norm_backward(g) : layer_norm_backward(g);
    dx_gpu[run] = ddx.to_host(mix.x);
    dgamma_gpu[run] = ddg.to_host(mix.p);
    dbeta_gpu[run] = ddb.to_host(mix.p);
  }
  if (dx_gpu[0].bytes != dx_gpu[1].bytes || dgamma_gpu[0].bytes != dgamma_gpu[1].bytes ||
      dbeta_gpu[0].bytes != dbeta_gpu[1].bytes) {
    ADD_FAILURE() << where << ": two backward runs gave different bits";
    ++bad;
  }
  std::vector<double> sum_dyxh(static_cast<std::size_t>(n), 0.0), sum_dy(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double mu = rms ? 0.0 : mean_cpu.get(r), rs = rstd_cpu.get(r);
    double mg = 0.0, mgx = 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double g = (with_gamma ? gamma.get(j) : 1.0) * dy.get(r * n + j), xh = (x.get(r * n + j) - mu) * rs;
      mg += std::fabs(g);
      mgx += std::fabs(g * xh);
      sum_dyxh[static_cast<std::size_t>(j)] += std::fabs(dy.get(r * n + j) * xh);
      sum_dy[static_cast<std::size_t>(j)] += std::fabs(dy.get(r * n + j));
    }
    mg /= static_cast<double>(n);
    mgx /= static_cast<double>(n);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t i = r * n + j;
      const double g = (with_gamma ? gamma.get(j) : 1.0) * dy.get(i), xh = (x.get(i) - mu) * rs;
      const double bound = 2.0 * u * std::fabs(dx_cpu.get(i)) +
                           4.0 * stat_tol * rs * (std::fabs(g) + mg + (std::fabs(xh) + 1.0) * mgx) + 1e-7;
      report("dx", i, dx_gpu[0].get(i), dx_cpu.get(i), bound);
      report("dx vs the CUDA reference", i, dx_gpu[0].get(i), dx_gpu[kCudaReference].get(i), bound);
    }
  }
  const double up = unit_roundoff(mix.p), sum_tol = static_cast<double>(rows + 2) * 0x1p-23 + 2e-6;
  for (std::int64_t j = 0; j < n; ++j) {
    const auto jj = static_cast<std::size_t>(j);
    const double acc_g = accumulate ? std::fabs(dgamma.get(j)) : 0.0,
                 acc_b = accumulate ? std::fabs(dbeta.get(j)) : 0.0;
    const double dgamma_bound = 2.0 * up * std::fabs(dgamma_cpu.get(j)) + sum_tol * (sum_dyxh[jj] + acc_g) + 1e-7;
    const double dbeta_bound = 2.0 * up * std::fabs(dbeta_cpu.get(j)) + sum_tol * (sum_dy[jj] + acc_b) + 1e-7;
    const int ref = kCudaReference;
    if (want_dgamma) {
      report("dgamma", j, dgamma_gpu[0].get(j), dgamma_cpu.get(j), dgamma_bound);
      report("dgamma vs the CUDA reference", j, dgamma_gpu[0].get(j), dgamma_gpu[ref].get(j), dgamma_bound);
    }
    if (want_dbeta) {
      report("dbeta", j, dbeta_gpu[0].get(j), dbeta_cpu.get(j), dbeta_bound);
      report("dbeta vs the CUDA reference", j, dbeta_gpu[0].get(j), dbeta_gpu[ref].get(j), dbeta_bound);
    }
  }
  return bad;
}

void check_norm_mix(const NormMix& mix) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  int bad = 0;
  for (NormKind kind : {NormKind::layer, NormKind::rms})
    for (NormShape s : kNormShapes) {
      bad += check_norm(mix, kind, s, rng, seed);
      if (bad > 5) return;
    }
}

}  // namespace

TEST(CudaNorm, F32) {
  AMPKIT_REQUIRE_GPU();
  check_norm_mix({"f32", DType::f32, DType::f32});
}
TEST(CudaNorm, Bf16) {
  AMPKIT_REQUIRE_GPU();
  check_norm_mix({"bf16", DType::bf16, DType::bf16});
}
TEST(CudaNorm, F16) {
  AMPKIT_REQUIRE_GPU();
  check_norm_mix({"f16", DType::f16, DType::f16});
}
TEST(CudaNorm, Bf16WithF32Params) {
  AMPKIT_REQUIRE_GPU();
  check_norm_mix({"bf16/f32", DType::bf16, DType::f32});
}
TEST(CudaNorm, F16WithF32Params) {
  AMPKIT_REQUIRE_GPU();
  check_norm_mix({"f16/f32", DType::f16, DType::f32});
}

// The same values at a 16-byte boundary and one element past it: the aligned and unaligned kernels
// (other registers, so another grid), whose threads take the same elements: the same bits.
void check_layouts_agree(const NormMix& mix) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 700, n = 4096, count = rows * n;
  HostArray x(mix.x, count + 1), dy(mix.x, count + 1), gamma(mix.p, n + 1), beta(mix.p, n + 1);
  fill_random(x, rng, 2.0f, 4.0f);
  fill_random(dy, rng);
  fill_random(gamma, rng, 0.5f, 1.5f);
  fill_random(beta, rng);
  HostArray out[2][6];  // y, mean, rstd, dx, dgamma, dbeta
  for (int shift = 0; shift < 2; ++shift) {
    const std::size_t xs = dtype_size(mix.x), ps = dtype_size(mix.p);
    // The arrays' elements shift .. shift + count (the views start `shift` elements in).
    HostArray xh = x, dyh = dy, gh = gamma, bh = beta;
    if (shift == 1) {
      for (std::int64_t i = count; i > 0; --i) xh.set(i, x.get(i - 1)), dyh.set(i, dy.get(i - 1));
      for (std::int64_t j = n; j > 0; --j) gh.set(j, gamma.get(j - 1)), bh.set(j, beta.get(j - 1));
    }
    DeviceArray dx_in(xh), ddy(dyh), dg(gh), db(bh), y((count + 1) * xs, 0x7f), dx((count + 1) * xs, 0x7f),
        mean(rows * 4, 0x7f), rstd(rows * 4, 0x7f), dgam((n + 1) * ps, 0x7f), dbet((n + 1) * ps, 0x7f);
    const auto at = [&](const DeviceArray& a, std::size_t size) { return static_cast<char*>(a.get()) + shift * size; };
    NormForwardArgs f;
    f.x = TensorView(at(dx_in, xs), mix.x, {rows, n}, Device::cuda);
    f.gamma = TensorView(at(dg, ps), mix.p, {n}, Device::cuda);
    f.beta = TensorView(at(db, ps), mix.p, {n}, Device::cuda);
    f.y = TensorView(at(y, xs), mix.x, {rows, n}, Device::cuda);
    f.mean = TensorView(mean.get(), DType::f32, {rows}, Device::cuda);
    f.rstd = TensorView(rstd.get(), DType::f32, {rows}, Device::cuda);
    layer_norm_forward(f);
    NormBackwardArgs b;
    b.dy = TensorView(at(ddy, xs), mix.x, {rows, n}, Device::cuda);
    b.x = f.x;
    b.mean = f.mean;
    b.rstd = f.rstd;
    b.gamma = f.gamma;
    b.dx = TensorView(at(dx, xs), mix.x, {rows, n}, Device::cuda);
    b.dgamma = TensorView(at(dgam, ps), mix.p, {n}, Device::cuda);
    b.dbeta = TensorView(at(dbet, ps), mix.p, {n}, Device::cuda);
    layer_norm_backward(b);
    out[shift][0] = y.to_host(mix.x);
    out[shift][1] = mean.to_host(DType::f32);
    out[shift][2] = rstd.to_host(DType::f32);
    out[shift][3] = dx.to_host(mix.x);
    out[shift][4] = dgam.to_host(mix.p);
    out[shift][5] = dbet.to_host(mix.p);
  }
  const char* names[6] = {"y", "mean", "rstd", "dx", "dgamma", "dbeta"};
  for (int o = 0; o < 6; ++o) {
    const HostArray &a = out[0][o], &u = out[1][o];
    const bool stat = o == 1 || o == 2;  // mean and rstd are not shifted
    const std::int64_t shift = stat ? 0 : 1, length = stat ? rows : o >= 4 ? n : count;
    std::int64_t differ = 0, first = -1;
    for (std::int64_t i = 0; i < length; ++i) {
      const float p = a.get(i), q = u.get(i + shift);
      if (std::memcmp(&p, &q, sizeof p) != 0 && differ++ == 0) first = i;
    }
    EXPECT_TRUE(differ == 0) << mix.name << " " << names[o] << ": " << differ
                             << " elements differ between the aligned and unaligned layouts, the first at " << first
                             << " (seed " << seed << ")";
  }
}

TEST(CudaNorm, AlignedAndUnalignedLayoutsGiveTheSameBits) {
  AMPKIT_REQUIRE_GPU();
  check_layouts_agree({"f32", DType::f32, DType::f32});
  check_layouts_agree({"bf16", DType::bf16, DType::bf16});
  check_layouts_agree({"f16/f32", DType::f16, DType::f32});
}

// rows = 0: dgamma/dbeta are sums over no rows: 0, or unchanged when accumulating.
TEST(CudaNorm, NoRowsZeroesOrKeepsTheParameterGradients) {
  AMPKIT_REQUIRE_GPU();
  for (bool accumulate : {false, true}) {
    HostArray gamma(DType::bf16, 8), start(DType::bf16, 8);
    for (std::int64_t j = 0; j < 8; ++j) {
      gamma.set(j, 1.0f);
      start.set(j, 3.0f);
    }
    DeviceArray g(gamma), dg(start), db(start), dy(16, 0);
    NormBackwardArgs b;
    b.dy = TensorView(dy.get(), DType::bf16, {0, 8}, Device::cuda);
    b.x = TensorView(dy.get(), DType::bf16, {0, 8}, Device::cuda);
    b.mean = TensorView(nullptr, DType::f32, {0}, Device::cuda);
    b.rstd = TensorView(nullptr, DType::f32, {0}, Device::cuda);
    b.gamma = TensorView(g.get(), DType::bf16, {8}, Device::cuda);
    b.dgamma = TensorView(dg.get(), DType::bf16, {8}, Device::cuda);
    b.dbeta = TensorView(db.get(), DType::bf16, {8}, Device::cuda);
    b.accumulate = accumulate;
    layer_norm_backward(b);
    const HostArray got_g = dg.to_host(DType::bf16), got_b = db.to_host(DType::bf16);
    for (std::int64_t j = 0; j < 8; ++j) {
      EXPECT_TRUE(got_g.get(j) == (accumulate ? 3.0f : 0.0f)) << "dgamma[" << j << "] = " << got_g.get(j);
      EXPECT_TRUE(got_b.get(j) == (accumulate ? 3.0f : 0.0f)) << "dbeta[" << j << "] = " << got_b.get(j);
    }
  }
}

}  // namespace ampkit::cuda_test
