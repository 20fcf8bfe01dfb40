// Causal attention reference (kernels layer): plain loops, double math, one rounding per output.
// The last entries of the attention lists; the tests compare the CPU kernels with it and take
// central finite differences of attention_forward_reference_double.
//   S[i, j] = s q_i . k_j (j <= i), lse_i = log sum_j exp(S[i, j]), P = exp(S - lse),
//   out_i = sum_j P[i, j] v_j;  backward (P from the saved lse, Delta_i = dout_i . out_i):
//   dS = P (dout_i . v_j - Delta_i), dq_i = s sum_j dS k_j, dk_j = s sum_i dS q_i,
//   dv_j = sum_i P dout_i.
#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "ampkit/core/error.hpp"
#include "core/element.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/elementwise/element_io.hpp"

namespace ampkit::cpu {
namespace {

// Element (b, i, c) of an operand, widened to double.
double at(const ops::AttentionInput& x, std::int64_t b, std::int64_t i, std::int64_t c) {
  return double{load_element(x.data, x.dtype, b * x.batch_stride + i * x.row_stride + c)};
}

// Stores v (or, accumulating, the old value + v) at element (b, i, c), rounded once.
void put(const ops::AttentionOutput& y, std::int64_t b, std::int64_t i, std::int64_t c, double v, bool accumulate) {
  const std::int64_t e = b * y.batch_stride + i * y.row_stride + c;
  if (accumulate) v += double{load_element(y.data, y.dtype, e)};
  store_double(y.data, y.dtype, e, v);
}

// s * q_i . k_j over head h's columns [c0, c0 + d).
template <class Problem>
double score(const Problem& p, std::int64_t b, std::int64_t c0, std::int64_t i, std::int64_t j) {
  double dot = 0.0;
  for (std::int64_t c = c0; c < c0 + p.head_dim; ++c) dot += at(p.q, b, i, c) * at(p.k, b, j, c);
  return double{p.scale} * dot;
}

template <class T>
std::vector<T> scratch(std::int64_t n, const char* fn) {
  try {
    return std::vector<T>(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
    fail_with(ErrorKind::out_of_memory, fn, "could not allocate ", n, " doubles of scratch");
  }
}

}  // namespace

void attention_forward_reference_double(const ops::AttentionForwardProblem& p, double* out, double* lse) {
  const std::int64_t t_len = p.seq, d = p.head_dim, cols = p.heads * d;
  std::vector<double> s = scratch<double>(t_len, "attention_forward");
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < t_len; ++i) {
        double m = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {
          s[j] = score(p, b, h * d, i, j);
          m = std::max(m, s[j]);
        }
        double l = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) l += std::exp(s[j] - m);
        for (std::int64_t c = h * d; c < (h + 1) * d; ++c) {
          double o = 0.0;
          for (std::int64_t j = 0; j <= i; ++j) o += std::exp(s[j] - m) * at(p.v, b, j, c);
          out[(b * t_len + i) * cols + c] = o / l;
        }
        lse[(b * p.heads + h) * t_len + i] = m + std::log(l);
      }
}

void attention_forward_reference(const ops::AttentionForwardProblem& p) {
  const std::int64_t cols = p.heads * p.head_dim;
  std::vector<double> out = scratch<double>(p.batch * p.seq * cols, "attention_forward");
  std::vector<double> lse = scratch<double>(p.batch * p.heads * p.seq, "attention_forward");
  attention_forward_reference_double(p, out.data(), lse.data());
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seq; ++i)
      for (std::int64_t c = 0; c < cols; ++c) put(p.out, b, i, c, out[(b * p.seq + i) * cols + c], false);
  for (std::size_t r = 0; r < lse.size(); ++r) p.lse[r] = static_cast<float>(lse[r]);
}

void attention_backward_reference(const ops::AttentionBackwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim;
  std::vector<double> prob = scratch<double>(t_len * t_len, "attention_backward");
  std::vector<double> ds = scratch<double>(t_len * t_len, "attention_backward");
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const std::int64_t c0 = h * d, c1 = c0 + d;
      // P[i, j] and dS[i, j] for j <= i.
      for (std::int64_t i = 0; i < t_len; ++i) {
        const double lse = double{p.lse[(b * p.heads + h) * t_len + i]};
        double delta = 0.0;
        for (std::int64_t c = c0; c < c1; ++c) delta += at(p.dout, b, i, c) * at(p.out, b, i, c);
        for (std::int64_t j = 0; j <= i; ++j) {
          const double pij = std::exp(score(p, b, c0, i, j) - lse);
          double dp = 0.0;
          for (std::int64_t c = c0; c < c1; ++c) dp += at(p.dout, b, i, c) * at(p.v, b, j, c);
          prob[i * t_len + j] = pij;
          ds[i * t_len + j] = pij * (dp - delta);
        }
      }
      for (std::int64_t r = 0; r < t_len; ++r)
        for (std::int64_t c = c0; c < c1; ++c) {
          if (p.dq.data != nullptr) {  // dq_r = s sum_{j <= r} dS[r, j] k_j
            double sum = 0.0;
            for (std::int64_t j = 0; j <= r; ++j) sum += ds[r * t_len + j] * at(p.k, b, j, c);
            put(p.dq, b, r, c, double{p.scale} * sum, p.accumulate);
          }
          if (p.dk.data != nullptr) {  // dk_r = s sum_{i >= r} dS[i, r] q_i
            double sum = 0.0;
            for (std::int64_t i = r; i < t_len; ++i) sum += ds[i * t_len + r] * at(p.q, b, i, c);
            put(p.dk, b, r, c, double{p.scale} * sum, p.accumulate);
          }
          if (p.dv.data != nullptr) {  // dv_r = sum_{i >= r} P[i, r] dout_i
            double sum = 0.0;
            for (std::int64_t i = r; i < t_len; ++i) sum += prob[i * t_len + r] * at(p.dout, b, i, c);
            put(p.dv, b, r, c, sum, p.accumulate);
          }
        }
    }
}

}  // namespace ampkit::cpu
