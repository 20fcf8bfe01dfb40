// Validation of attention_forward / attention_backward (ops layer): every argument checked
// (include/ampkit/ops/attention.hpp) and decoded into the problem a kernel takes. Outputs are
// checked against inputs by byte range, and dq/dk/dv against each other by an exact strided test,
// so they may be interleaved column slices of one packed dQKV buffer. Called by the front end
// (attention_front_end.cpp) and the tests; nothing is read or written through any operand.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/operand_checks.hpp"

namespace ampkit::ops {
namespace {

constexpr const char* kForward = "attention_forward";
constexpr const char* kBackward = "attention_backward";

std::string strides_string(const TensorView& v) {
  std::string s = "[";
  for (int i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.strides[i]);
  return s + "]";
}

// One [batch, seq, C] operand after its layout checks. Strides of size-1 dims are set to 0 (never
// used); bytes is the span from data to one past its last byte (0 when empty).
struct Operand {
  const char* name = nullptr;
  const TensorView* view = nullptr;
  std::int64_t batch_stride = 0, row_stride = 0;
  std::int64_t bytes = 0;
};

// Present, CPU, float dtype, rank 3, dims >= 0.
void check_structure(const char* fn, const char* name, const TensorView& v, const OnDevice& dev) {
  check_float_operand_on(fn, name, v, dev);
  check_rank(fn, name, v, 3);
  for (int i = 0; i < 3; ++i)
    if (v.shape[i] < 0) fail(fn, name, " dimension ", i, " must be >= 0, but got ", v.shape[i]);
}

// Strides >= 0, last dim contiguous, data non-null, the span fits int64; for an output, no two
// elements at the same address (the dims of size > 1, inner to outer by stride, each step over
// everything inside it).
Operand decode_layout(const char* fn, const char* name, const TensorView& v, bool output, const OnDevice& dev,
                      Stage stage) {
  Operand o;
  o.name = name;
  o.view = &v;
  const std::int64_t batch = v.shape[0], seq = v.shape[1], cols = v.shape[2];
  for (int i = 0; i < 3; ++i)
    if (v.strides[i] < 0)
      fail(fn, name, " strides must be >= 0, but got ", strides_string(v), " for shape ", v.shape_string());
  if (cols > 1 && v.strides[2] != 1)
    fail(fn, name, " last dim must be contiguous (stride 1), but got strides ", strides_string(v), " for shape ",
         v.shape_string());
  o.batch_stride = batch > 1 ? v.strides[0] : 0;
  o.row_stride = seq > 1 ? v.strides[1] : 0;
  if (batch == 0 || seq == 0 || cols == 0) return o;
  if (stage == Stage::call && v.data == nullptr)
    fail(fn, name, " must point to its elements, but got null data for ", v.describe());
  const auto last_b = checked_mul(batch - 1, o.batch_stride);
  const auto last_t = checked_mul(seq - 1, o.row_stride);
  const auto last = last_b && last_t ? checked_add(*last_b, *last_t) : std::nullopt;
  const auto end = last ? checked_add(*last, cols) : std::nullopt;
  const auto bytes = end ? checked_mul(*end, static_cast<std::int64_t>(dtype_size(v.dtype))) : std::nullopt;
  if (!bytes)
    fail(fn, name, " ", v.describe(), " with strides ", strides_string(v), " spans more bytes than int64 can count");
  o.bytes = *bytes;
  check_device_memory(fn, name, v.data, o.bytes, dev, stage);
  if (!output) return o;
  // Dims of size > 1 by increasing stride; `extent` elements are covered by the dims inside.
  std::int64_t s1 = o.row_stride, n1 = seq, s2 = o.batch_stride, n2 = batch;
  if (n1 <= 1 || (n2 > 1 && s2 < s1)) {
    std::swap(s1, s2);
    std::swap(n1, n2);
  }
  std::int64_t extent = cols;
  for (const auto& [s, n] : {std::pair{s1, n1}, std::pair{s2, n2}}) {
    if (n <= 1) continue;
    if (s < extent)
      fail(fn, name, " is an output, so its elements must not overlap each other, but its strides ", strides_string(v),
           " for shape ", v.shape_string(), " step over less than a row");
    extent = (n - 1) * s + extent;  // <= the span, which fits
  }
  return o;
}

// Output `out` must not share a byte with `other` (byte ranges).
void check_apart(const char* fn, const Operand& out, const Operand& other, const char* kind, Stage stage) {
  if (stage == Stage::descriptor) return;
  if (ranges_overlap(out.view->data, out.bytes, other.view->data, other.bytes))
    fail(fn, out.name, " (", out.view->describe(), ") must not overlap the ", kind, " ", other.name, " (",
         other.view->describe(), "), but their memory ranges overlap");
}

// floor(a / b) for b > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Exact test: do two outputs of the same [batch, seq, C] shape share a byte? Row (b, t) of x
// covers the bytes [start_x + b SB_x + t ST_x, + W_x). When the byte strides agree, row (b1, t1)
// of a and row (b2, t2) of b overlap iff -W_b < delta + db SB + dt ST < W_a, with delta =
// start_b - start_a, db = b2 - b1 in (-batch, batch) and dt = t2 - t1 in (-seq, seq): for each
// value of the shorter of db, dt, the other's admissible values form an interval. When the
// strides differ, the byte ranges decide (interleaving is then not recognized). True: overlap.
bool outputs_overlap(const Operand& a, const Operand& b) {
  if (!ranges_overlap(a.view->data, a.bytes, b.view->data, b.bytes)) return false;
  const auto ea = static_cast<std::int64_t>(dtype_size(a.view->dtype));
  const auto eb = static_cast<std::int64_t>(dtype_size(b.view->dtype));
  const std::int64_t sb = a.batch_stride * ea, st = a.row_stride * ea;
  if (sb != b.batch_stride * eb || st != b.row_stride * eb) return true;
  // Both ranges overlap, so |delta| is below the larger span and every |x| below is at most two
  // spans; spans of real memory are far below 2^61, larger ones are simply called overlapping.
  constexpr std::int64_t kSpanLimit = std::int64_t{1} << 61;
  if (a.bytes > kSpanLimit || b.bytes > kSpanLimit) return true;
  const std::int64_t cols = a.view->shape[2], wa = cols * ea, wb = cols * eb;
  const std::int64_t delta = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(b.view->data) -
                                                       reinterpret_cast<std::uintptr_t>(a.view->data));
  std::int64_t n_outer = a.view->shape[0], s_outer = sb, n_inner = a.view->shape[1], s_inner = st;
  if (n_outer > n_inner) {
    std::swap(n_outer, n_inner);
    std::swap(s_outer, s_inner);
  }
  for (std::int64_t d = -(n_outer - 1); d <= n_outer - 1; ++d) {
    const std::int64_t x = delta + d * s_outer;
    if (s_inner == 0) {
      if (-wb < x && x < wa) return true;
      continue;
    }
    // -wb < x + n s < wa  <=>  floor((-wb - x) / s) < n < ceil((wa - x) / s)
    const std::int64_t lo = std::max(floor_div(-wb - x, s_inner) + 1, -(n_inner - 1));
    const std::int64_t hi = std::min(-floor_div(x - wa, s_inner) - 1, n_inner - 1);
    if (lo <= hi) return true;
  }
  return false;
}

// heads >= 1, scale finite and >= 0, q's last dim a positive multiple of heads. Returns head_dim.
std::int64_t check_heads(const char* fn, int heads, float scale, const TensorView& q) {
  if (heads < 1) fail(fn, "heads must be >= 1, but got ", heads);
  check_finite(fn, "scale", scale);
  if (scale < 0.0f) fail(fn, "scale must be >= 0 (0 selects 1/sqrt(head_dim)), but got ", scale);
  const std::int64_t cols = q.shape[2];
  if (cols < 1) fail(fn, "q's last dim (heads * head_dim) must be >= 1, but got shape ", q.shape_string());
  if (cols % heads != 0)
    fail(fn, "q's last dim (", cols, ") must be a multiple of heads (", heads, "): it is heads * head_dim");
  return cols / heads;
}

// lse: present, f32, [batch, heads, seq], contiguous, non-null.
Operand decode_lse(const char* fn, const TensorView& lse, const TensorView& q, int heads, const OnDevice& dev,
                   Stage stage) {
  check_given(fn, "lse", lse, "the log-sum-exp, [batch, heads, seq] f32");
  check_operand_on(fn, "lse", lse, dev);
  if (lse.dtype != DType::f32) fail(fn, "lse dtype must be f32, but got ", dtype_name(lse.dtype));
  const std::int64_t dims[3] = {q.shape[0], heads, q.shape[1]};
  check_shape(fn, "lse", lse, dims, 3, "shape [batch, heads, seq] =");
  Operand o;
  o.name = "lse";
  o.view = &lse;
  o.bytes = check_float_view_on(fn, "lse", lse, dev.device, dev.index, dev.owner, stage);  // contiguity, size, pointer
  check_data(fn, "lse", lse, "[batch, heads, seq] f32", stage);
  return o;
}

AttentionInput as_input(const Operand& o) { return {o.view->data, o.view->dtype, o.batch_stride, o.row_stride}; }
AttentionOutput as_output(const Operand& o) { return {o.view->data, o.view->dtype, o.batch_stride, o.row_stride}; }

float resolved_scale(float scale, std::int64_t head_dim) {
  return scale > 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

}  // namespace

AttentionForwardProblem validate_attention_forward(const AttentionForwardArgs& args, Stage stage) {
  const char* fn = kForward;
  const char* names[] = {"q", "k", "v", "out"};
  const TensorView* views[] = {&args.q, &args.k, &args.v, &args.out};
  const OnDevice dev = call_device(fn, "q", args.q);
  for (int i = 0; i < 4; ++i) check_structure(fn, names[i], *views[i], dev);
  for (int i = 1; i < 4; ++i) check_same_shape(fn, "q", args.q, names[i], *views[i]);
  const std::int64_t head_dim = check_heads(fn, args.heads, args.scale, args.q);
  Operand ops[4];
  for (int i = 0; i < 4; ++i) ops[i] = decode_layout(fn, names[i], *views[i], i == 3, dev, stage);
  const Operand lse = decode_lse(fn, args.lse, args.q, args.heads, dev, stage);
  for (int i = 0; i < 3; ++i) check_apart(fn, ops[3], ops[i], "input", stage);
  check_apart(fn, ops[3], lse, "output", stage);
  for (int i = 0; i < 3; ++i) check_apart(fn, lse, ops[i], "input", stage);

  AttentionForwardProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.batch = args.q.shape[0];
  p.seq = args.q.shape[1];
  p.heads = args.heads;
  p.head_dim = head_dim;
  p.scale = resolved_scale(args.scale, head_dim);
  p.q = as_input(ops[0]);
  p.k = as_input(ops[1]);
  p.v = as_input(ops[2]);
  p.out = as_output(ops[3]);
  p.lse = static_cast<float*>(args.lse.data);
  return p;
}

AttentionBackwardProblem validate_attention_backward(const AttentionBackwardArgs& args, Stage stage) {
  const char* fn = kBackward;
  const char* in_names[] = {"q", "k", "v", "out", "dout"};
  const TensorView* in_views[] = {&args.q, &args.k, &args.v, &args.out, &args.dout};
  const char* out_names[] = {"dq", "dk", "dv"};
  const TensorView* out_views[] = {&args.dq, &args.dk, &args.dv};
  const OnDevice dev = call_device(fn, "q", args.q);
  for (int i = 0; i < 5; ++i) check_structure(fn, in_names[i], *in_views[i], dev);
  for (int i = 0; i < 3; ++i)
    if (out_views[i]->present) check_structure(fn, out_names[i], *out_views[i], dev);
  for (int i = 1; i < 5; ++i) check_same_shape(fn, "q", args.q, in_names[i], *in_views[i]);
  for (int i = 0; i < 3; ++i)
    if (out_views[i]->present) check_same_shape(fn, "q", args.q, out_names[i], *out_views[i]);
  const std::int64_t head_dim = check_heads(fn, args.heads, args.scale, args.q);
  Operand ins[6], outs[3];
  for (int i = 0; i < 5; ++i) ins[i] = decode_layout(fn, in_names[i], *in_views[i], false, dev, stage);
  ins[5] = decode_lse(fn, args.lse, args.q, args.heads, dev, stage);
  for (int i = 0; i < 3; ++i)
    if (out_views[i]->present) outs[i] = decode_layout(fn, out_names[i], *out_views[i], true, dev, stage);
  for (int i = 0; i < 3; ++i) {
    if (!out_views[i]->present) continue;
    for (const Operand& in : ins) check_apart(fn, outs[i], in, "input", stage);
    for (int j = 0; j < i; ++j)
      if (stage == Stage::call && out_views[j]->present && outputs_overlap(outs[j], outs[i]))
        fail(fn, out_names[i], " (", out_views[i]->describe(), ") must not overlap the output ", out_names[j], " (",
             out_views[j]->describe(),
             "), but they share memory (column slices of one buffer must take disjoint columns "
             "with the same strides)");
  }

  AttentionBackwardProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.batch = args.q.shape[0];
  p.seq = args.q.shape[1];
  p.heads = args.heads;
  p.head_dim = head_dim;
  p.scale = resolved_scale(args.scale, head_dim);
  p.q = as_input(ins[0]);
  p.k = as_input(ins[1]);
  p.v = as_input(ins[2]);
  p.out = as_input(ins[3]);
  p.dout = as_input(ins[4]);
  p.lse = static_cast<const float*>(args.lse.data);
  if (args.dq.present) p.dq = as_output(outs[0]);
  if (args.dk.present) p.dk = as_output(outs[1]);
  if (args.dv.present) p.dv = as_output(outs[2]);
  p.accumulate = args.accumulate;
  return p;
}

}  // namespace ampkit::ops
