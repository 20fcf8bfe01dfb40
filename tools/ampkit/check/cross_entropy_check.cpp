// The softmax cross-entropy part of `ampkit check kernels` (tools layer, check/): forward (loss and
// the saved lse) for every logits dtype and backward (from the reference's lse) for every logits /
// dlogits dtype pair, over [rows, classes] from 1 x 1 to rows longer than a 256-class block, at the
// ISA under test and at the reference kernels; tolerances cross_entropy_* of error_bounds.hpp
// (the fp32 sum of exps over the row, one rounding of dlogits).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {

void check_cross_entropy(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  using Shape = std::pair<std::int64_t, std::int64_t>;
  const std::vector<Shape> shapes = quick ? std::vector<Shape>{{1, 1}, {3, 7}, {5, 300}}
                                          : std::vector<Shape>{{1, 1}, {3, 7}, {5, 300}, {2, 5000}, {64, 65}};
  constexpr float kDloss = 1.5f;
  std::mt19937_64 rng(seed ^ 0xce);
  // Plain locals, not structured bindings: the lambdas below capture them (clang 14 cannot
  // capture a structured binding).
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape.first, classes = shape.second;
    for (const DType tx : kFloatDTypes) {
      std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(classes - 1));
      std::vector<std::int32_t> targets(static_cast<std::size_t>(rows));
      for (auto& t : targets) t = pick(rng);
      const TensorView target_view(targets.data(), DType::i32, {rows});
      CheckTensor logits(tx, rows * classes);
      logits.fill_normal(rng, 3.0);
      CheckTensor loss_want(DType::f32, 1), lse_want(DType::f32, rows);
      loss_want.poison(), lse_want.poison();
      CheckTensor loss_got = loss_want, lse_got = lse_want;
      std::string kernel;
      run_reference([&] {
        softmax_cross_entropy_forward(view(logits, {rows, classes}), target_view, view(loss_want, {1}),
                                      view(lse_want, {rows}));
      });
      run_at(isa, [&] {
        kernel = listed_kernel("softmax_cross_entropy_forward");
        softmax_cross_entropy_forward(view(logits, {rows, classes}), target_view, view(loss_got, {1}),
                                      view(lse_got, {rows}));
      });
      std::map<std::string, Deviation> dev;
      double worst = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) {
        const double tol = error_bounds::cross_entropy_lse(classes, lse_want.get(r));
        worst = std::max(worst, tol);
        dev["lse"].add(lse_got.get(r), lse_want.get(r), tol);
      }
      dev["loss"].add(loss_got.get(0), loss_want.get(0), error_bounds::cross_entropy_loss(worst, loss_want.get(0)));
      char what[96];
      std::snprintf(what, sizeof what, "[%lld, %lld] logits %s", static_cast<long long>(rows),
                    static_cast<long long>(classes), name(tx).c_str());
      record(results, "softmax_cross_entropy_forward", kernel, what, dev);
      // Backward from the reference's lse.
      for (const DType td : kFloatDTypes) {
        CheckTensor dwant(td, rows * classes), dgot(td, rows * classes);
        dwant.poison(), dgot.poison();
        run_reference([&] {
          softmax_cross_entropy_backward(view(logits, {rows, classes}), target_view, view(lse_want, {rows}), kDloss,
                                         view(dwant, {rows, classes}));
        });
        run_at(isa, [&] {
          kernel = listed_kernel("softmax_cross_entropy_backward");
          softmax_cross_entropy_backward(view(logits, {rows, classes}), target_view, view(lse_want, {rows}), kDloss,
                                         view(dgot, {rows, classes}));
        });
        const double scale = kDloss / static_cast<double>(rows);
        std::map<std::string, Deviation> bdev;
        for (std::int64_t i = 0; i < dwant.size(); ++i)
          bdev["dlogits"].add(
              dgot.get(i), dwant.get(i),
              error_bounds::cross_entropy_dlogits(scale, logits.get(i), lse_want.get(i / classes), dwant.get(i), td));
        record(results, "softmax_cross_entropy_backward", kernel, std::string(what) + " dlogits " + name(td), bdev);
      }
    }
  }
}

}  // namespace ampkit::tools::check
