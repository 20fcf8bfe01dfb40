// The optimizer part of `ampkit check kernels` (tools layer, check/): adamw_step and sgd_step
// (with and without momentum) for every gradient dtype and compute-copy dtype (or none), over
// parameters of 1, odd and more than a 4096-element block, plus global_grad_norm over lists of
// views of mixed dtypes and all_finite with and without a non-finite element, at the ISA under
// test and at the reference kernels. Tolerances adamw_step, sgd_step and global_grad_norm of
// error_bounds.hpp; the compute copy must be the stored param rounded once, all_finite exact.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/float16.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {
namespace {

namespace eb = error_bounds;

// The copy must hold the stored f32 param rounded once to its dtype.
void compare_copy(const CheckTensor& param, const CheckTensor& copy, std::map<std::string, Deviation>& dev) {
  CheckTensor rounded(copy.dtype, copy.size());
  for (std::int64_t i = 0; i < param.size(); ++i) rounded.set(i, param.get(i));
  for (std::int64_t i = 0; i < param.size(); ++i) dev["param_copy"].add(copy.get(i), rounded.get(i), 0.0);
}

struct State {
  CheckTensor param, grad, m, v, copy;
};

}  // namespace

void check_optimizers(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<std::int64_t> sizes =
      quick ? std::vector<std::int64_t>{1, 7, 4099} : std::vector<std::int64_t>{1, 7, 300, 4099, 20000};
  const std::optional<DType> copies[] = {std::nullopt, DType::bf16, DType::f16, DType::f32};
  const eb::AdamWHyper hypers[] = {{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.5f, 1},
                                   {0.01f, 0.5f, 0.75f, 1e-3f, 0.1f, -2.0f, 1000}};
  std::mt19937_64 rng(seed ^ 0x0b7);
  for (const std::int64_t n : sizes)
    for (const DType tg : kFloatDTypes)
      for (const std::optional<DType> tc : copies)
        for (std::size_t hi = 0; hi < std::size(hypers); ++hi) {
          const eb::AdamWHyper& h = hypers[hi];
          char what[96];
          std::snprintf(what, sizeof what, "n %lld grad %s copy %s hyper %zu", static_cast<long long>(n),
                        name(tg).c_str(), tc ? name(*tc).c_str() : "none", hi);
          State in;
          in.param = CheckTensor(DType::f32, n), in.grad = CheckTensor(tg, n);
          in.m = CheckTensor(DType::f32, n), in.v = CheckTensor(DType::f32, n);
          in.param.fill_normal(rng), in.grad.fill_normal(rng), in.m.fill_normal(rng, 0.1), in.v.fill_normal(rng, 0.1);
          for (std::int64_t i = 0; i < n; ++i) in.v.set(i, in.v.get(i) * in.v.get(i));
          if (tc) in.copy = CheckTensor(*tc, n), in.copy.poison();
          const auto adamw = [&](State& s) {
            AdamWArgs a;
            a.param = view(s.param, {n}), a.grad = view(s.grad, {n}), a.m = view(s.m, {n}), a.v = view(s.v, {n});
            if (tc) a.param_copy = view(s.copy, {n});
            a.lr = static_cast<float>(h.lr), a.beta1 = static_cast<float>(h.beta1);
            a.beta2 = static_cast<float>(h.beta2), a.eps = static_cast<float>(h.eps);
            a.weight_decay = static_cast<float>(h.weight_decay), a.grad_scale = static_cast<float>(h.grad_scale);
            a.step = h.step;
            adamw_step(a);
          };
          State want = in, got = in;
          std::string kernel;
          run_reference([&] { adamw(want); });
          run_at(isa, [&] {
            kernel = listed_kernel("adamw_step");
            adamw(got);
          });
          std::map<std::string, Deviation> dev;
          for (std::int64_t i = 0; i < n; ++i) {
            const eb::AdamWBound b =
                eb::adamw_step(h, in.param.get(i), in.grad.get(i), in.m.get(i), in.v.get(i), want.param.get(i));
            dev["m"].add(got.m.get(i), want.m.get(i), b.m);
            dev["v"].add(got.v.get(i), want.v.get(i), b.v);
            dev["param"].add(got.param.get(i), want.param.get(i), b.param);
          }
          if (tc) compare_copy(got.param, got.copy, dev);
          record(results, "adamw_step", kernel, what, dev);
          // SGD on the same inputs (m as the momentum buffer): momentum 0 without a buffer, 0.9 with.
          const float momentum = hi == 0 ? 0.0f : 0.9f;
          const auto sgd = [&](State& s) {
            SgdArgs a;
            a.param = view(s.param, {n}), a.grad = view(s.grad, {n});
            if (momentum != 0.0f) a.momentum_buffer = view(s.m, {n});
            if (tc) a.param_copy = view(s.copy, {n});
            a.lr = 0.05f, a.momentum = momentum, a.weight_decay = 0.01f,
            a.grad_scale = static_cast<float>(h.grad_scale);
            sgd_step(a);
          };
          want = in, got = in;
          run_reference([&] { sgd(want); });
          run_at(isa, [&] {
            kernel = listed_kernel("sgd_step");
            sgd(got);
          });
          std::map<std::string, Deviation> sdev;
          for (std::int64_t i = 0; i < n; ++i) {
            const double buf = momentum != 0.0f ? in.m.get(i) : 0.0;
            const eb::SgdBound b = eb::sgd_step(0.05f, momentum, 0.01f, h.grad_scale, in.param.get(i), in.grad.get(i),
                                                buf, want.param.get(i));
            sdev["param"].add(got.param.get(i), want.param.get(i), b.param);
            if (momentum != 0.0f) sdev["momentum_buffer"].add(got.m.get(i), want.m.get(i), b.buf);
          }
          if (tc) compare_copy(got.param, got.copy, sdev);
          std::snprintf(what, sizeof what, "n %lld grad %s copy %s momentum %g", static_cast<long long>(n),
                        name(tg).c_str(), tc ? name(*tc).c_str() : "none", static_cast<double>(momentum));
          record(results, "sgd_step", kernel, what, sdev);
        }
  // global_grad_norm and all_finite over one list of views of every dtype and size.
  std::vector<CheckTensor> grads;
  for (const std::int64_t n : sizes)
    for (const DType t : kFloatDTypes) {
      grads.emplace_back(t, n);
      grads.back().fill_normal(rng, 1e-3);
    }
  for (std::size_t count = 1; count <= grads.size(); count = count * 2 + 1) {
    std::vector<TensorView> views;
    for (std::size_t i = 0; i < count; ++i) views.push_back(view(grads[i], {grads[i].size()}));
    double want = 0.0, got = 0.0;
    bool finite_want = false, finite_got = true;
    std::int64_t elements = 0;
    for (std::size_t i = 0; i < count; ++i) elements += grads[i].size();
    std::string kernel, finite_kernel;
    run_reference([&] { want = global_grad_norm(views), finite_want = all_finite(views); });
    run_at(isa, [&] {
      kernel = listed_kernel("global_grad_norm"), finite_kernel = listed_kernel("all_finite");
      got = global_grad_norm(views), finite_got = all_finite(views);
    });
    std::map<std::string, Deviation> dev, fdev;
    dev["norm"].add(got, want, eb::global_grad_norm(elements, want));
    fdev["finite"].add(finite_got ? 1.0 : 0.0, finite_want ? 1.0 : 0.0, 0.0);
    const std::string what = std::to_string(count) + " views, " + std::to_string(elements) + " elements";
    record(results, "global_grad_norm", kernel, what, dev);
    // A non-finite element in the last view: all_finite must say so.
    CheckTensor& last = grads[count - 1];
    const double saved = last.get(last.size() - 1);
    last.set(last.size() - 1, count % 2 ? INFINITY : NAN);
    run_reference([&] { finite_want = all_finite(views); });
    run_at(isa, [&] { finite_got = all_finite(views); });
    fdev["non-finite"].add(finite_got ? 1.0 : 0.0, finite_want ? 1.0 : 0.0, 0.0);
    last.set(last.size() - 1, saved);
    record(results, "all_finite", finite_kernel, what, fdev);
  }
}

}  // namespace ampkit::tools::check
