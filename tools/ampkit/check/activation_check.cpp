// The GELU part of `ampkit check kernels` (tools layer, check/): gelu_forward and gelu_backward,
// tanh and erf forms, every dtype of x, dy and the output, over lengths 1, odd and longer than a
// vector, at the ISA under test and at the reference kernel; tolerances gelu_*_output of
// error_bounds.hpp (gelu_math's evaluation error, one rounding to the output dtype).
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/activation.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {

void check_activation(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<std::int64_t> lengths =
      quick ? std::vector<std::int64_t>{1, 7, 129} : std::vector<std::int64_t>{1, 7, 129, 2049};
  std::mt19937_64 rng(seed ^ 0xac7);
  for (const GeluVariant variant : {GeluVariant::tanh, GeluVariant::erf})
    for (const std::int64_t n : lengths)
      for (const DType tx : kFloatDTypes)
        for (const DType to : kFloatDTypes) {
          const char* form = variant == GeluVariant::tanh ? "tanh" : "erf";
          CheckTensor x(tx, n), y(to, n);
          x.fill_normal(rng, 2.0);
          y.poison();
          char what[96];
          std::snprintf(what, sizeof what, "%s n %lld x %s y %s", form, static_cast<long long>(n), name(tx).c_str(),
                        name(to).c_str());
          CheckTensor want = y, got = y;
          std::string kernel;
          run_reference([&] { gelu_forward(view(x, {n}), view(want, {n}), variant); });
          run_at(isa, [&] {
            kernel = listed_kernel("gelu");
            gelu_forward(view(x, {n}), view(got, {n}), variant);
          });
          std::map<std::string, Deviation> dev;
          for (std::int64_t i = 0; i < n; ++i)
            dev["y"].add(got.get(i), want.get(i), error_bounds::gelu_forward_output(x.get(i), want.get(i), to));
          record(results, "gelu_forward", kernel, what, dev);
          // Backward: dy in each dtype too (quick: dy in x's dtype).
          for (const DType td : kFloatDTypes) {
            if (quick && td != tx) continue;
            CheckTensor dy(td, n), dx_want(to, n), dx_got(to, n);
            dy.fill_normal(rng);
            dx_want.poison(), dx_got.poison();
            run_reference([&] { gelu_backward(view(x, {n}), view(dy, {n}), view(dx_want, {n}), variant); });
            run_at(isa, [&] {
              kernel = listed_kernel("gelu");
              gelu_backward(view(x, {n}), view(dy, {n}), view(dx_got, {n}), variant);
            });
            std::map<std::string, Deviation> bdev;
            for (std::int64_t i = 0; i < n; ++i)
              bdev["dx"].add(dx_got.get(i), dx_want.get(i),
                             error_bounds::gelu_backward_output(dy.get(i), dx_want.get(i), to));
            std::snprintf(what, sizeof what, "%s n %lld x %s dy %s dx %s", form, static_cast<long long>(n),
                          name(tx).c_str(), name(td).c_str(), name(to).c_str());
            record(results, "gelu_backward", kernel, what, bdev);
          }
        }
}

}  // namespace ampkit::tools::check
