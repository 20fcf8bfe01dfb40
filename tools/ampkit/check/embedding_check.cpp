// The embedding part of `ampkit check kernels` (tools layer, check/): embedding_forward (a copy or
// one rounding: the same values, tolerance 0) and embedding_backward (plain and accumulating) for
// every table / output dtype pair, over (tokens, vocab, dim) from 1 x 1 x 1 to rows longer than a
// vector with repeated ids, at the ISA under test and at the reference kernels; the backward's
// tolerance is embedding_backward_output of error_bounds.hpp (an fp32 sum in token order).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/embedding.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {

void check_embedding(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  struct Shape {
    std::int64_t tokens, vocab, dim;
  };
  const std::vector<Shape> shapes = quick ? std::vector<Shape>{{1, 1, 1}, {7, 5, 3}, {64, 50, 33}}
                                          : std::vector<Shape>{{1, 1, 1}, {7, 5, 3}, {64, 50, 33}, {300, 100, 129}};
  std::mt19937_64 rng(seed ^ 0xe3b);
  for (const Shape& s : shapes)
    for (const DType tt : kFloatDTypes)
      for (const DType to : kFloatDTypes) {
        std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(s.vocab - 1));
        std::vector<std::int32_t> ids(static_cast<std::size_t>(s.tokens));
        for (auto& id : ids) id = pick(rng);
        const TensorView id_view(ids.data(), DType::i32, {s.tokens});
        char what[96];
        std::snprintf(what, sizeof what, "%lld tokens vocab %lld dim %lld table %s out %s",
                      static_cast<long long>(s.tokens), static_cast<long long>(s.vocab), static_cast<long long>(s.dim),
                      name(tt).c_str(), name(to).c_str());
        // Forward: out[t, :] = table[ids[t], :].
        CheckTensor table(tt, s.vocab * s.dim), want(to, s.tokens * s.dim), got(to, s.tokens * s.dim);
        table.fill_normal(rng, 100.0);
        want.poison(), got.poison();
        std::string kernel;
        run_reference([&] {
          embedding_forward(id_view, view(table, {s.vocab, s.dim}), view(want, {s.tokens, s.dim}));
        });
        run_at(isa, [&] {
          kernel = listed_kernel("embedding_forward");
          embedding_forward(id_view, view(table, {s.vocab, s.dim}), view(got, {s.tokens, s.dim}));
        });
        std::map<std::string, Deviation> dev;
        for (std::int64_t i = 0; i < want.size(); ++i) dev["out"].add(got.get(i), want.get(i), 0.0);
        record(results, "embedding_forward", kernel, what, dev);
        // Backward: dtable (in tt) from dout (in to).
        CheckTensor dout(to, s.tokens * s.dim);
        dout.fill_normal(rng);
        std::vector<double> count(static_cast<std::size_t>(s.vocab), 0.0),
            mag(static_cast<std::size_t>(s.vocab * s.dim));
        for (std::int64_t t = 0; t < s.tokens; ++t) {
          const std::int64_t v = ids[static_cast<std::size_t>(t)];
          count[static_cast<std::size_t>(v)] += 1.0;
          for (std::int64_t j = 0; j < s.dim; ++j)
            mag[static_cast<std::size_t>(v * s.dim + j)] += std::fabs(dout.get(t * s.dim + j));
        }
        for (const bool accumulate : {false, true}) {
          CheckTensor dwant(tt, s.vocab * s.dim);
          if (accumulate)
            dwant.fill_normal(rng, 4.0);
          else
            dwant.poison();
          CheckTensor dgot = dwant;
          const CheckTensor old = dwant;
          run_reference([&] {
            embedding_backward(id_view, view(dout, {s.tokens, s.dim}), view(dwant, {s.vocab, s.dim}), accumulate);
          });
          run_at(isa, [&] {
            kernel = listed_kernel("embedding_backward");
            embedding_backward(id_view, view(dout, {s.tokens, s.dim}), view(dgot, {s.vocab, s.dim}), accumulate);
          });
          std::map<std::string, Deviation> bdev;
          for (std::int64_t v = 0; v < s.vocab; ++v)
            for (std::int64_t j = 0; j < s.dim; ++j) {
              const std::int64_t e = v * s.dim + j;
              const double m = mag[static_cast<std::size_t>(e)] + (accumulate ? std::fabs(old.get(e)) : 0.0);
              const double c = count[static_cast<std::size_t>(v)] + (accumulate ? 1.0 : 0.0);
              bdev["dtable"].add(dgot.get(e), dwant.get(e),
                                 error_bounds::embedding_backward_output(c, m, dwant.get(e), tt));
            }
          record(results, "embedding_backward", kernel, std::string(what) + (accumulate ? " accumulate" : ""), bdev);
        }
      }
}

}  // namespace ampkit::tools::check
