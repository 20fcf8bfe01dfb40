// The Linear layer's front end (kernels layer): validates a forward or backward call in the
// layer's own terms (batch, in_features, out_features), then maps each computation onto one
// gemm() call with a fused epilogue, exactly as DESIGN.md section 3's Linear table says.
// Row-major [r, c] is the same memory as column-major (c x r); every mapping follows from that.
// Called by users, the graph executor and `ampkit bench linear`; calls only gemm().
#include "ampkit/layers/linear.hpp"

#include <cstring>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/tensor.hpp"

namespace ampkit {
namespace {

constexpr const char* kForward = "linear_forward";
constexpr const char* kBackward = "linear_backward";

// Elements of a [rows, cols] matrix; throws when it does not fit in int64 bytes.
std::int64_t checked_numel(const char* fn, const char* name, std::int64_t rows, std::int64_t cols) {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(rows, cols, &n) || n > (INT64_MAX / 4))
    fail(fn, name, " has too many elements (", rows, " x ", cols, ")");
  return n;
}

void check_sizes(const char* fn, std::int64_t batch, std::int64_t in, std::int64_t out) {
  if (batch < 0) fail(fn, "batch must be >= 0, but got ", batch);
  if (in < 0) fail(fn, "in_features must be >= 0, but got ", in);
  if (out < 0) fail(fn, "out_features must be >= 0, but got ", out);
}

// A buffer taking part in the call, for the null and overlap checks.
struct Region {
  const char* name;
  const void* data;
  std::int64_t bytes;
};

Region region(const char* name, const void* data, DType t, std::int64_t numel) {
  return Region{name, data, data ? numel * static_cast<std::int64_t>(dtype_size(t)) : 0};
}

void check_present(const char* fn, const char* name, const void* data, const char* shape,
                   std::int64_t numel) {
  if (data == nullptr && numel > 0) fail(fn, name, " ", shape, " must not be null");
}

void check_dtype(const char* fn, const char* name, DType got, const char* owner, DType owner_dtype) {
  if (got != owner_dtype && got != DType::f32)
    fail(fn, name, " dtype must be ", owner, "'s (", dtype_name(owner_dtype), ") or f32, but got ",
         dtype_name(got));
}

// No output may overlap an input or another output (each GEMM of the call reads its inputs
// after an earlier GEMM of the same call has written its outputs).
void check_no_overlap(const char* fn, const std::vector<Region>& outputs,
                      const std::vector<Region>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Region& o = outputs[i];
    for (const Region& in : inputs)
      if (ranges_overlap(o.data, o.bytes, in.data, in.bytes))
        fail(fn, o.name, " overlaps the input ", in.name);
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (ranges_overlap(o.data, o.bytes, outputs[j].data, outputs[j].bytes))
        fail(fn, o.name, " overlaps the output ", outputs[j].name);
  }
}

// Runs gemm_check on a planned call so that every GEMM of a Linear call is known to be valid
// before the first one writes anything.
void check_gemm(const char* fn, const char* what, const GemmArgs& g) {
  const std::string message = gemm_check(g);
  if (!message.empty()) fail(fn, what, " GEMM rejected: ", message);
}

std::int64_t ld(std::int64_t rows) { return rows > 0 ? rows : 1; }

// Forward: validates and builds the one GEMM call.
GemmArgs plan_forward(const LinearForwardArgs& a) {
  const char* fn = kForward;
  check_sizes(fn, a.batch, a.in_features, a.out_features);
  const std::int64_t nx = checked_numel(fn, "x", a.batch, a.in_features);
  const std::int64_t nw = checked_numel(fn, "w", a.out_features, a.in_features);
  const std::int64_t ny = checked_numel(fn, "y", a.batch, a.out_features);
  const bool compute = ny > 0;
  check_present(fn, "x", a.x.data, "[batch, in_features]", compute ? nx : 0);
  check_present(fn, "w", a.w.data, "[out_features, in_features]", compute ? nw : 0);
  check_present(fn, "y", a.y.data, "[batch, out_features]", ny);
  if (a.bias.data) check_dtype(fn, "bias", a.bias.dtype, "y", a.y.dtype);
  if (a.aux.data) {
    if (!a.gelu) fail(fn, "aux is only written with gelu = true (it is the pre-activation)");
    check_dtype(fn, "aux", a.aux.dtype, "y", a.y.dtype);
  }
  check_no_overlap(fn,
                   {region("y", a.y.data, a.y.dtype, ny), region("aux", a.aux.data, a.aux.dtype, ny)},
                   {region("x", a.x.data, a.x.dtype, nx), region("w", a.w.data, a.w.dtype, nw),
                    region("bias", a.bias.data, a.bias.dtype, a.out_features)});

  // Y [batch, out] = X [batch, in] Wᵀ + b, column-major: Y (out x batch) = op(W) (out x in) *
  // X (in x batch) with W seen as (in x out), transposed. GEMM m = out, n = batch, k = in.
  GemmArgs g;
  g.op_a = Op::T;
  g.op_b = Op::N;
  g.m = a.out_features;
  g.n = a.batch;
  g.k = a.in_features;
  g.a = a.w.data;
  g.a_dtype = a.w.dtype;
  g.lda = ld(a.in_features);
  g.b = a.x.data;
  g.b_dtype = a.x.dtype;
  g.ldb = ld(a.in_features);
  g.d = a.y.data;
  g.d_dtype = a.y.dtype;
  g.ldd = ld(a.out_features);
  g.fp16_mode = a.fp16_mode;
  GemmEpilogue& e = g.epilogue;
  const bool bias = a.bias.data != nullptr, aux = a.aux.data != nullptr;
  if (!a.gelu) e.kind = bias ? Epilogue::BIAS : Epilogue::DEFAULT;
  else if (aux) e.kind = bias ? Epilogue::GELU_AUX_BIAS : Epilogue::GELU_AUX;
  else e.kind = bias ? Epilogue::GELU_BIAS : Epilogue::GELU;
  e.gelu = a.gelu_variant;
  if (bias) {
    e.bias = a.bias.data;  // length m = out
    e.bias_dtype = a.bias.dtype;
  }
  if (aux) {
    e.aux = a.aux.data;  // (out x batch) column-major = [batch, out] row-major
    e.aux_dtype = a.aux.dtype;
    e.aux_ld = ld(a.out_features);
  }
  return g;
}

// The GEMMs of one backward call, planned and validated before any runs.
struct BackwardPlan {
  bool run_dx = false, run_dw = false, run_db_alone = false;
  GemmArgs dx, dw, db_alone;
  std::vector<float> ones;               // db without dw: [batch] ones (the 1 x batch A)
  std::vector<unsigned char> db_scratch; // db without dw: the discarded 1 x out product
  bool zero_below_db = false;            // batch == 0: the layer below's bias gradient is 0
};

void plan_backward(const LinearBackwardArgs& a, BackwardPlan& plan) {
  const char* fn = kBackward;
  check_sizes(fn, a.batch, a.in_features, a.out_features);
  const std::int64_t nx = checked_numel(fn, "x", a.batch, a.in_features);
  const std::int64_t nw = checked_numel(fn, "w", a.out_features, a.in_features);
  const std::int64_t ny = checked_numel(fn, "dy", a.batch, a.out_features);
  const bool want_dx = a.dx.data != nullptr;
  const bool want_dw = a.dw.data != nullptr;
  const bool want_db = a.db.data != nullptr;

  if (a.below_db.data && !a.below_gelu)
    fail(fn, "below_db (the layer below's bias gradient) needs below_gelu = true");
  if (a.below_aux.data && !a.below_gelu)
    fail(fn, "below_aux is only read with below_gelu = true");
  if (a.below_gelu) {
    if (!want_dx && nx > 0)
      fail(fn, "below_gelu needs dx (the GELU gradient is fused into the dx GEMM)");
    if (!a.below_aux.data && nx > 0)
      fail(fn, "below_aux [batch, in_features] (the pre-activation saved by the layer below's "
               "forward) is required when below_gelu is set");
  }
  if (want_dx || want_dw || want_db) check_present(fn, "dy", a.dy.data, "[batch, out_features]", ny);
  if (want_dx) check_present(fn, "w", a.w.data, "[out_features, in_features] (needed for dx)", nw);
  if (want_dw) check_present(fn, "x", a.x.data, "[batch, in_features] (needed for dw)", nx);
  if (a.below_aux.data) check_dtype(fn, "below_aux", a.below_aux.dtype, "dx", a.dx.dtype);
  if (a.below_db.data) check_dtype(fn, "below_db", a.below_db.dtype, "dx", a.dx.dtype);
  if (want_db && want_dw) check_dtype(fn, "db", a.db.dtype, "dw", a.dw.dtype);
  check_no_overlap(fn,
                   {region("dx", a.dx.data, a.dx.dtype, nx), region("dw", a.dw.data, a.dw.dtype, nw),
                    region("db", a.db.data, a.db.dtype, a.out_features),
                    region("below_db", a.below_db.data, a.below_db.dtype, a.in_features)},
                   {region("dy", a.dy.data, a.dy.dtype, ny), region("x", a.x.data, a.x.dtype, nx),
                    region("w", a.w.data, a.w.dtype, nw),
                    region("below_aux", a.below_aux.data, a.below_aux.dtype, nx)});

  if (want_dx && nx > 0) {
    // dX [batch, in] = dY [batch, out] W [out, in], column-major: dX (in x batch) =
    // W (in x out) * dY (out x batch). GEMM m = in, n = batch, k = out.
    GemmArgs& g = plan.dx;
    g.op_a = Op::N;
    g.op_b = Op::N;
    g.m = a.in_features;
    g.n = a.batch;
    g.k = a.out_features;
    g.a = a.w.data;
    g.a_dtype = a.w.dtype;
    g.lda = ld(a.in_features);
    g.b = a.dy.data;
    g.b_dtype = a.dy.dtype;
    g.ldb = ld(a.out_features);
    g.d = a.dx.data;
    g.d_dtype = a.dx.dtype;
    g.ldd = ld(a.in_features);
    g.fp16_mode = a.fp16_mode;
    if (a.below_gelu) {
      GemmEpilogue& e = g.epilogue;
      e.kind = a.below_db.data ? Epilogue::DGELU_BGRAD : Epilogue::DGELU;
      e.gelu = a.below_gelu_variant;
      e.aux = const_cast<void*>(a.below_aux.data);  // input for DGELU: (in x batch) column-major
      e.aux_dtype = a.below_aux.dtype;
      e.aux_ld = ld(a.in_features);
      if (a.below_db.data) {
        e.bias_grad = a.below_db.data;  // length m = in: the sum over the n = batch columns
        e.bias_dtype = a.below_db.dtype;
        e.accumulate_bias_grad = a.accumulate;
      }
    }
    check_gemm(fn, "dx", g);
    plan.run_dx = true;
  }
  plan.zero_below_db = a.below_db.data && a.batch == 0 && a.in_features > 0 && !a.accumulate;

  if (want_dw && nw > 0) {
    // dW [out, in] = dYᵀ [out, batch] X [batch, in], column-major: dW (in x out) =
    // X (in x batch) * op(dY) (batch x out), dY seen as (out x batch), transposed.
    // GEMM m = in, n = out, k = batch; BGRADB sums op(dY) over k = batch: db, length n = out.
    GemmArgs& g = plan.dw;
    g.op_a = Op::N;
    g.op_b = Op::T;
    g.m = a.in_features;
    g.n = a.out_features;
    g.k = a.batch;
    g.a = a.x.data;
    g.a_dtype = a.x.dtype;
    g.lda = ld(a.in_features);
    g.b = a.dy.data;
    g.b_dtype = a.dy.dtype;
    g.ldb = ld(a.out_features);
    g.beta = a.accumulate ? 1.0f : 0.0f;
    g.c = a.accumulate ? a.dw.data : nullptr;
    g.c_dtype = a.dw.dtype;
    g.ldc = ld(a.in_features);
    g.d = a.dw.data;
    g.d_dtype = a.dw.dtype;
    g.ldd = ld(a.in_features);
    g.fp16_mode = a.fp16_mode;
    if (want_db) {
      g.epilogue.kind = Epilogue::BGRADB;
      g.epilogue.bias_grad = a.db.data;
      g.epilogue.bias_dtype = a.db.dtype;
      g.epilogue.accumulate_bias_grad = a.accumulate;
    }
    check_gemm(fn, "dw", g);
    plan.run_dw = true;
  } else if (want_db && a.out_features > 0) {
    // db without dw (or with in = 0): the same BGRADB reduction on a 1 x batch row of ones,
    // D (1 x out) = ones (1 x batch) * op(dY) (batch x out) goes to a scratch buffer.
    // GEMM m = 1, n = out, k = batch; db = sum of op(dY) over k = batch, length n = out.
    plan.ones.assign(static_cast<std::size_t>(a.batch > 0 ? a.batch : 1), 1.0f);
    plan.db_scratch.assign(static_cast<std::size_t>(a.out_features) * dtype_size(a.db.dtype), 0);
    GemmArgs& g = plan.db_alone;
    g.op_a = Op::N;
    g.op_b = Op::T;
    g.m = 1;
    g.n = a.out_features;
    g.k = a.batch;
    g.a = plan.ones.data();
    g.a_dtype = DType::f32;
    g.lda = 1;
    g.b = a.dy.data;
    g.b_dtype = a.dy.dtype;
    g.ldb = ld(a.out_features);
    g.d = plan.db_scratch.data();
    g.d_dtype = a.db.dtype;
    g.ldd = 1;
    g.fp16_mode = a.fp16_mode;
    g.epilogue.kind = Epilogue::BGRADB;
    g.epilogue.bias_grad = a.db.data;
    g.epilogue.bias_dtype = a.db.dtype;
    g.epilogue.accumulate_bias_grad = a.accumulate;
    check_gemm(fn, "db", g);
    plan.run_db_alone = true;
  }
}

}  // namespace

void linear_forward(const LinearForwardArgs& args) {
  const GemmArgs g = plan_forward(args);
  if (g.m == 0 || g.n == 0) return;  // y is empty
  check_gemm(kForward, "forward", g);
  gemm(g);
}

const char* linear_forward_kernel_name(const LinearForwardArgs& args) {
  const GemmArgs g = plan_forward(args);
  check_gemm(kForward, "forward", g);
  return gemm_kernel_name(g);
}

void linear_backward(const LinearBackwardArgs& args) {
  BackwardPlan plan;
  plan_backward(args, plan);
  // Every GEMM is validated; none of them reads what another writes (checked above).
  if (plan.run_dx) gemm(plan.dx);
  if (plan.zero_below_db)
    std::memset(args.below_db.data, 0,
                static_cast<std::size_t>(args.in_features) * dtype_size(args.below_db.dtype));
  if (plan.run_dw) gemm(plan.dw);
  if (plan.run_db_alone) gemm(plan.db_alone);
}

}  // namespace ampkit
