// The elementwise part of `ampkit check kernels` (tools layer, check/): add, add_accumulate,
// add_row_vector, scale and sum_rows (plain and accumulating) over [rows, n] shapes (1 x 1, odd,
// more rows than a block of 32 and a row longer than a vector), every dtype mix, at the ISA under
// test and at the reference kernels; tolerances elementwise_output and sum_rows_output of
// error_bounds.hpp (one fp32 result rounded to the output; the sum's fp32 chain).
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {
namespace {

namespace eb = error_bounds;

// Compares every element of got with want against elementwise_output.
std::map<std::string, Deviation> compare_elements(const CheckTensor& got, const CheckTensor& want) {
  std::map<std::string, Deviation> dev;
  for (std::int64_t i = 0; i < want.size(); ++i)
    dev["out"].add(got.get(i), want.get(i), eb::elementwise_output(want.get(i), want.dtype));
  return dev;
}

}  // namespace

void check_elementwise(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  using Shape = std::pair<std::int64_t, std::int64_t>;
  const std::vector<Shape> shapes = quick ? std::vector<Shape>{{1, 1}, {3, 7}, {33, 65}}
                                          : std::vector<Shape>{{1, 1}, {3, 7}, {33, 65}, {100, 129}, {1000, 7}};
  std::mt19937_64 rng(seed ^ 0xe1e);
  // Plain locals, not structured bindings: the lambdas below capture them (clang 14 cannot
  // capture a structured binding).
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape.first, n = shape.second;
    for (const DType ta : kFloatDTypes)
      for (const DType tb : kFloatDTypes)
        for (const DType to : kFloatDTypes) {
          char what[96];
          std::snprintf(what, sizeof what, "[%lld, %lld] %s + %s -> %s", static_cast<long long>(rows),
                        static_cast<long long>(n), name(ta).c_str(), name(tb).c_str(), name(to).c_str());
          CheckTensor a(ta, rows * n), b(tb, rows * n), bias(tb, n), out(to, rows * n);
          a.fill_normal(rng), b.fill_normal(rng), bias.fill_normal(rng), out.poison();
          std::string kernel;
          // out = a + b
          CheckTensor want = out, got = out;
          run_reference([&] { add(view(a, {rows, n}), view(b, {rows, n}), view(want, {rows, n})); });
          run_at(isa, [&] {
            kernel = listed_kernel("elementwise");
            add(view(a, {rows, n}), view(b, {rows, n}), view(got, {rows, n}));
          });
          record(results, "add", kernel, what, compare_elements(got, want));
          // out[r, :] = a[r, :] + bias
          want = out, got = out;
          run_reference([&] { add_row_vector(view(a, {rows, n}), view(bias, {n}), view(want, {rows, n})); });
          run_at(isa, [&] { add_row_vector(view(a, {rows, n}), view(bias, {n}), view(got, {rows, n})); });
          record(results, "add_row_vector", kernel, what, compare_elements(got, want));
          if (tb != to) continue;  // the two-operand ops: x in a's dtype, acc / out in to
          std::snprintf(what, sizeof what, "[%lld, %lld] %s -> %s", static_cast<long long>(rows),
                        static_cast<long long>(n), name(ta).c_str(), name(to).c_str());
          // acc += a (acc starts as b)
          CheckTensor acc_want(to, rows * n), acc_got(to, rows * n);
          for (std::int64_t i = 0; i < b.size(); ++i) acc_want.set(i, b.get(i));
          acc_got = acc_want;
          run_reference([&] { add_accumulate(view(a, {rows, n}), view(acc_want, {rows, n})); });
          run_at(isa, [&] { add_accumulate(view(a, {rows, n}), view(acc_got, {rows, n})); });
          record(results, "add_accumulate", kernel, what, compare_elements(acc_got, acc_want));
          // out = alpha a
          want = out, got = out;
          run_reference([&] { scale(view(a, {rows, n}), -0.37f, view(want, {rows, n})); });
          run_at(isa, [&] { scale(view(a, {rows, n}), -0.37f, view(got, {rows, n})); });
          record(results, "scale", kernel, what, compare_elements(got, want));
          // out[j] (+)= sum over rows of a[r, j]
          for (const bool accumulate : {false, true}) {
            CheckTensor sum_want(to, n), sum_got(to, n);
            if (accumulate)
              sum_want.fill_normal(rng, 4.0);
            else
              sum_want.poison();
            sum_got = sum_want;
            const CheckTensor old = sum_want;
            std::string sum_kernel;
            run_reference([&] { sum_rows(view(a, {rows, n}), view(sum_want, {n}), accumulate); });
            run_at(isa, [&] {
              sum_kernel = listed_kernel("sum_rows");
              sum_rows(view(a, {rows, n}), view(sum_got, {n}), accumulate);
            });
            std::map<std::string, Deviation> dev;
            for (std::int64_t j = 0; j < n; ++j) {
              double mag = accumulate ? std::fabs(old.get(j)) : 0.0;
              for (std::int64_t r = 0; r < rows; ++r) mag += std::fabs(a.get(r * n + j));
              dev["out"].add(sum_got.get(j), sum_want.get(j), eb::sum_rows_output(rows, mag, sum_want.get(j), to));
            }
            record(results, "sum_rows", sum_kernel, std::string(what) + (accumulate ? " accumulate" : ""), dev);
          }
        }
  }
}

}  // namespace ampkit::tools::check
