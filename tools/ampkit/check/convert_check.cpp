// The conversion part of `ampkit check kernels` (tools layer, check/): convert between every pair
// of f32, bf16 and f16 (equal dtypes included: the copy), over lengths 1, odd and longer than a
// vector, on values from fp16's subnormals to beyond its range plus the specials (signed zeros,
// infinities, NaN), at the ISA under test and at the reference kernel. Every path rounds to
// nearest even once, so the results must be the same values (tolerance 0; NaN where NaN).
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/ops/convert.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {

void check_convert(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<std::int64_t> lengths =
      quick ? std::vector<std::int64_t>{1, 7, 133} : std::vector<std::int64_t>{1, 7, 133, 4099};
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, 65520.0, 0x1p-24, 0x1p-25, 3e38};
  std::mt19937_64 rng(seed ^ 0xc0);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const std::int64_t n : lengths)
    for (const DType from : kFloatDTypes)
      for (const DType to : kFloatDTypes) {
        CheckTensor src(from, n), want(to, n), got(to, n);
        for (std::int64_t i = 0; i < n; ++i)
          src.set(i, i % 5 == 4 ? specials[(i / 5) % std::size(specials)] : std::ldexp(normal(rng), exponent(rng)));
        want.poison(), got.poison();
        std::string kernel;
        run_reference([&] { convert(view(src, {n}), view(want, {n})); });
        run_at(isa, [&] {
          kernel = convert_kernel_name(view(src, {n}), view(got, {n}));
          convert(view(src, {n}), view(got, {n}));
        });
        std::map<std::string, Deviation> dev;
        for (std::int64_t i = 0; i < n; ++i) dev["dst"].add(got.get(i), want.get(i), 0.0);
        char what[64];
        std::snprintf(what, sizeof what, "n %lld %s -> %s", static_cast<long long>(n), name(from).c_str(),
                      name(to).c_str());
        record(results, "convert", kernel, what, dev);
      }
}

}  // namespace ampkit::tools::check
