// The Linear layer (layers layer): validates a forward or backward call once, in the layer's
// own terms (x, w, y, dy, ... as TensorViews; batch = x's leading dims, in and out features),
// then states each computation as one row-major view GEMM (GemmViewArgs) with a fused epilogue,
// exactly as DESIGN.md section 3's Linear table says, and runs the column-major call that the
// view GEMM's own translation (ops::column_major_gemm, the one row-major -> column-major mapping
// of the library) gives for it. The validation covers everything gemm() checks, so no GEMM of a
// call can be rejected after another has written, and the view checks are not run again. No heap
// allocation per call. Each call is a prepared call (linear_prepared.hpp: the GEMMs validated and
// their kernels selected once, ops::prepare_gemm) run once; the graph executor keeps one per
// Linear node. Called by users, the graph executor and `ampkit bench linear`.
#include "ampkit/layers/linear.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/gemm_views.hpp"
#include "core/checked_math.hpp"
#include "core/workspace.hpp"
#include "layers/linear_prepared.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/gemm/gemm_view_call.hpp"
#include "ops/operand_checks.hpp"

namespace ampkit {
namespace {

constexpr const char* kForward = "linear_forward";
constexpr const char* kBackward = "linear_backward";

using Dims = std::array<std::int64_t, kMaxRank>;

void check_enums(const char* fn, GeluVariant gelu, const char* gelu_name, Fp16Mode mode) {
  if (gelu != GeluVariant::tanh && gelu != GeluVariant::erf)
    fail(fn, gelu_name, " must be tanh or erf, but got the value ", static_cast<int>(gelu));
  if (mode != Fp16Mode::exact && mode != Fp16Mode::flush && mode != Fp16Mode::alt)
    fail(fn, "fp16_mode must be exact, flush or alt, but got the value ", static_cast<int>(mode));
}

// The rows of a [..., features] operand: its leading dims and their product.
struct Rows {
  Dims dims{};   // leading dims, then room for the feature dim
  int lead = 0;  // number of leading dims
  std::int64_t batch = 1;
};

Rows leading_rows(const char* fn, const char* name, const TensorView& v, const char* layout) {
  if (v.rank < 1) fail(fn, name, " must have rank >= 1 (", layout, "), but got ", v.shape_string());
  Rows r;
  r.lead = v.rank - 1;
  for (int i = 0; i < r.lead; ++i) {
    r.dims[i] = v.shape[i];
    const auto next = checked_mul(r.batch, v.shape[i]);
    if (!next) fail(fn, name, " ", v.shape_string(), " has more rows than int64 can count");
    r.batch = *next;
  }
  return r;
}

// `name` must have the leading dims of `rows` followed by `features`.
void check_rows_shape(const char* fn, const char* name, const TensorView& v, const Rows& rows, std::int64_t features,
                      const char* what) {
  Dims want = rows.dims;
  want[rows.lead] = features;
  ops::check_shape(fn, name, v, want.data(), rows.lead + 1, what);
}

// A contiguous operand's memory as the row-major matrix [rows, cols] (a [..., features] operand
// as [batch, features]). Row stride max(1, cols): the leading dimension the GEMM takes for it.
TensorView as_matrix(void* data, DType dtype, Device device, int device_index, std::int64_t rows, std::int64_t cols) {
  TensorView m;
  m.data = data;
  m.dtype = dtype;
  m.rank = 2;
  m.shape[0] = rows;
  m.shape[1] = cols;
  m.strides[0] = cols > 0 ? cols : 1;
  m.strides[1] = 1;
  m.device = device;
  m.device_index = device_index;
  m.present = true;
  return m;
}

TensorView as_matrix(const TensorView& v, std::int64_t rows, std::int64_t cols) {
  return as_matrix(v.data, v.dtype, v.device, v.device_index, rows, cols);
}

// A contiguous operand as the vector [n].
TensorView as_vector(const TensorView& v, std::int64_t n) {
  TensorView r = as_matrix(v, n, 1);
  r.rank = 1;
  r.shape[1] = r.strides[1] = 0;
  r.strides[0] = 1;
  return r;
}

// Forward: validates and builds the one GEMM call.
GemmArgs plan_forward(const LinearForwardArgs& a, ops::Stage stage = ops::Stage::call) {
  const char* fn = kForward;
  using ops::check_data;
  check_enums(fn, a.gelu_variant, "gelu_variant", a.fp16_mode);
  ops::check_given(fn, "x", a.x, "the input [..., in_features]");
  ops::check_given(fn, "w", a.w, "the weight [out_features, in_features]");
  ops::check_given(fn, "y", a.y, "the output [..., out_features]");
  // Every operand on x's device (cpu, or one GPU: gemm's CUDA list then runs the call).
  const Device dev = a.x.device;
  const int dev_index = a.x.device_index;
  auto check_float_view = [&](const char* f, const char* name, const TensorView& v) {
    return ops::check_float_view_on(f, name, v, dev, dev_index, "x", stage);
  };
  const std::int64_t x_bytes = check_float_view(fn, "x", a.x);
  const std::int64_t w_bytes = check_float_view(fn, "w", a.w);
  const std::int64_t y_bytes = check_float_view(fn, "y", a.y);
  const Rows rows = leading_rows(fn, "x", a.x, "[..., in_features]");
  const std::int64_t in = a.x.shape[a.x.rank - 1];
  if (a.w.rank != 2 || a.w.shape[1] != in)
    fail(fn, "w must have shape [out_features, ", in, "] (in_features from x ", a.x.shape_string(), "), but got ",
         a.w.shape_string());
  const std::int64_t out = a.w.shape[0];
  check_rows_shape(fn, "y", a.y, rows, out, "shape [..., out_features] =");
  std::int64_t bias_bytes = 0, aux_bytes = 0;
  if (a.bias.present) {
    bias_bytes = check_float_view(fn, "bias", a.bias);
    ops::check_shape(fn, "bias", a.bias, &out, 1, "shape [out_features] =");
    ops::check_dtype_or_f32(fn, "bias", a.bias, a.y.dtype, "y's");
  }
  if (a.aux.present) {
    if (!a.gelu) fail(fn, "aux is only written with gelu = true (it is the pre-activation)");
    aux_bytes = check_float_view(fn, "aux", a.aux);
    ops::check_shape(fn, "aux", a.aux, a.y.shape.data(), a.y.rank, "y's shape");
    ops::check_dtype_or_f32(fn, "aux", a.aux, a.y.dtype, "y's");
  }
  const bool compute = y_bytes > 0;
  if (compute) {
    check_data(fn, "x", a.x, "elements", stage);
    check_data(fn, "w", a.w, "elements", stage);
  }
  check_data(fn, "y", a.y, "elements", stage);
  if (a.bias.present) check_data(fn, "bias", a.bias, "elements", stage);
  if (a.aux.present) check_data(fn, "aux", a.aux, "elements", stage);
  ops::OverlapCheck overlap(fn, stage);
  overlap.add("x", a.x, x_bytes, false);
  overlap.add("w", a.w, w_bytes, false);
  overlap.add("bias", a.bias, bias_bytes, false);
  overlap.add("y", a.y, y_bytes, true);
  overlap.add("aux", a.aux, aux_bytes, true);
  overlap.run();

  // Y [batch, out] = X [batch, in] Wᵀ + b: a = x, b = w transposed, d = y, bias along y's rows.
  GemmViewArgs g;
  g.op_a = Op::N;
  g.op_b = Op::T;
  g.a = as_matrix(a.x, rows.batch, in);
  g.b = as_matrix(a.w, out, in);
  g.d = as_matrix(a.y, rows.batch, out);
  g.fp16_mode = a.fp16_mode;
  const bool bias = a.bias.present && a.bias.data != nullptr;
  const bool aux = a.aux.present && a.aux.data != nullptr;
  if (!a.gelu)
    g.epilogue = bias ? Epilogue::BIAS : Epilogue::DEFAULT;
  else if (aux)
    g.epilogue = bias ? Epilogue::GELU_AUX_BIAS : Epilogue::GELU_AUX;
  else
    g.epilogue = bias ? Epilogue::GELU_BIAS : Epilogue::GELU;
  g.gelu = a.gelu_variant;
  if (bias) g.bias = as_vector(a.bias, out);
  if (aux) g.aux = as_matrix(a.aux, rows.batch, out);  // the pre-activation, y's shape
  return ops::column_major_gemm(g);
}

// The GEMMs of one backward call, planned after validation, before any runs.
struct BackwardPlan {
  bool run_dx = false, run_dw = false, run_db_alone = false;
  GemmArgs dx, dw;
  bool zero_below_db = false;  // batch == 0: the layer below's bias gradient is 0
  std::int64_t batch = 0, in = 0, out = 0;
  Device device = Device::cpu;  // of every operand (dy's)
  int device_index = 0;
};

// db without dw: the reduction runs on a column of ones and writes its discarded product to
// scratch, two slots of the thread's workspace (core/workspace.hpp) that only grow, so calls do
// not allocate once the largest shape has been seen. Only Linear writes the ones slot, so its
// ones stay until it grows (then the whole slot is filled again).
struct DbScratch {
  float* ones = nullptr;
  void* product = nullptr;
};

DbScratch db_scratch(std::int64_t batch, std::int64_t product_bytes) {
  const auto n = static_cast<std::size_t>(batch > 0 ? batch : 1);
  bool grew = false;
  DbScratch scratch;
  scratch.ones = static_cast<float*>(workspace(WorkspaceSlot::linear_db_ones, n * sizeof(float), &grew));
  scratch.product = workspace(WorkspaceSlot::linear_db_product, static_cast<std::size_t>(product_bytes));
  if (scratch.ones == nullptr || (scratch.product == nullptr && product_bytes > 0))
    fail_with(ErrorKind::out_of_memory, kBackward, "could not allocate the scratch for db (", batch, " ones and ",
              product_bytes, " bytes)");
  if (grew) std::fill_n(scratch.ones, workspace_bytes(WorkspaceSlot::linear_db_ones) / sizeof(float), 1.0f);
  return scratch;
}

// The shapes of a backward call: dy's leading dims (the batch), out, and in when any operand
// that has it is given.
struct BackwardShape {
  Rows rows;
  std::int64_t out = 0;
  std::int64_t in = 0;
  bool has_in = false;
};

BackwardShape backward_shape(const char* fn, const LinearBackwardArgs& a) {
  BackwardShape s;
  s.rows = leading_rows(fn, "dy", a.dy, "[..., out_features]");
  s.out = a.dy.shape[a.dy.rank - 1];
  // in_features: the last dim of the first given of x, dx, below_aux, else w's / dw's second
  // dim, else below_db's length.
  for (const TensorView* v : {&a.x, &a.dx, &a.below_aux})
    if (!s.has_in && v->present && v->rank >= 1) {
      s.in = v->shape[v->rank - 1];
      s.has_in = true;
    }
  for (const TensorView* v : {&a.w, &a.dw})
    if (!s.has_in && v->present && v->rank == 2) {
      s.in = v->shape[1];
      s.has_in = true;
    }
  if (!s.has_in && a.below_db.present && a.below_db.rank == 1) {
    s.in = a.below_db.shape[0];
    s.has_in = true;
  }
  return s;
}

void validate_backward(const LinearBackwardArgs& a, BackwardPlan& plan, ops::Stage stage = ops::Stage::call) {
  const char* fn = kBackward;
  using ops::check_data;
  using ops::check_given;
  check_enums(fn, a.below_gelu_variant, "below_gelu_variant", a.fp16_mode);
  const bool want_dx = a.dx.present, want_dw = a.dw.present, want_db = a.db.present;
  if (a.below_db.present && !a.below_gelu)
    fail(fn, "below_db (the layer below's bias gradient) needs below_gelu = true");
  if (a.below_aux.present && !a.below_gelu) fail(fn, "below_aux is only read with below_gelu = true");
  const TensorView* views[] = {&a.dy, &a.x, &a.w, &a.dx, &a.dw, &a.db, &a.below_aux, &a.below_db};
  const char* names[] = {"dy", "x", "w", "dx", "dw", "db", "below_aux", "below_db"};
  std::int64_t bytes[8] = {};
  // Every operand on the device of the first present one (dy, normally): the cpu, or one GPU.
  int owner = 0;
  while (owner < 7 && !views[owner]->present) ++owner;
  plan.device = views[owner]->device;
  plan.device_index = views[owner]->device_index;
  for (int i = 0; i < 8; ++i)
    if (views[i]->present)
      bytes[i] = ops::check_float_view_on(fn, names[i], *views[i], plan.device, plan.device_index, names[owner], stage);
  if (!a.dy.present) {
    if (want_dx || want_dw || want_db) check_given(fn, "dy", a.dy, "the gradient of y");
    return;  // nothing requested: nothing to do
  }
  const BackwardShape s = backward_shape(fn, a);
  const std::int64_t batch = s.rows.batch, out = s.out, in = s.in;
  for (const auto& [name, v] : {std::pair{"x", &a.x}, std::pair{"dx", &a.dx}, std::pair{"below_aux", &a.below_aux}})
    if (v->present) check_rows_shape(fn, name, *v, s.rows, in, "shape [..., in_features] =");
  const std::int64_t w_dims[2] = {out, in};
  for (const auto& [name, v] : {std::pair{"w", &a.w}, std::pair{"dw", &a.dw}})
    if (v->present) ops::check_shape(fn, name, *v, w_dims, 2, "shape [out_features, in_features] =");
  if (a.db.present) ops::check_shape(fn, "db", a.db, &out, 1, "shape [out_features] =");
  if (a.below_db.present) ops::check_shape(fn, "below_db", a.below_db, &in, 1, "shape [in_features] =");
  const auto nx_or = checked_mul(batch, in);
  const auto nw_or = checked_mul(out, in);
  if (!nx_or || !nw_or)
    fail(fn, "batch * in_features or out_features * in_features (batch ", batch, ", in ", in, ", out ", out,
         ") overflows int64");
  const std::int64_t nx = *nx_or, nw = *nw_or;
  if (a.below_gelu) {
    if (!want_dx && nx > 0) fail(fn, "below_gelu needs dx (the GELU gradient is fused into the dx GEMM)");
    if (!a.below_aux.present && nx > 0)
      fail(fn,
           "below_aux [..., in_features] (the pre-activation saved by the layer below's "
           "forward) is required when below_gelu is set");
  }
  if (want_dx || want_dw || want_db) check_data(fn, "dy", a.dy, "elements", stage);
  if (want_dx && nx > 0) {
    check_given(fn, "w", a.w, "[out_features, in_features], needed for dx");
    check_data(fn, "w", a.w, "elements (needed for dx)", stage);
  }
  if (want_dw && nw > 0) {
    check_given(fn, "x", a.x, "[..., in_features], needed for dw");
    check_data(fn, "x", a.x, "elements (needed for dw)", stage);
  }
  for (int i = 3; i < 8; ++i)
    if (views[i]->present) check_data(fn, names[i], *views[i], "elements", stage);
  if (want_dx && a.below_aux.present) ops::check_dtype_or_f32(fn, "below_aux", a.below_aux, a.dx.dtype, "dx's");
  if (want_dx && a.below_db.present) ops::check_dtype_or_f32(fn, "below_db", a.below_db, a.dx.dtype, "dx's");
  if (want_db && want_dw) ops::check_dtype_or_f32(fn, "db", a.db, a.dw.dtype, "dw's");
  if (plan.device == Device::cuda && want_db && !(want_dw && out * in > 0) && out > 0)
    fail_with(ErrorKind::unsupported, fn,
              "db without dw (or with in_features = 0) is not supported on cuda: ask for dw too, or run on the cpu");
  // No output may overlap an input or another output (each GEMM of the call reads its inputs
  // after an earlier GEMM of the same call has written its outputs).
  ops::OverlapCheck overlap(fn, stage);
  for (int i = 0; i < 8; ++i) {
    const bool output = i == 3 || i == 4 || i == 5 || i == 7;
    overlap.add(names[i], *views[i], bytes[i], output);
  }
  overlap.run();
  plan.batch = batch;
  plan.in = in;
  plan.out = out;
}

// Builds the GEMMs of a validated backward call.
void plan_backward(const LinearBackwardArgs& a, BackwardPlan& plan) {
  const std::int64_t batch = plan.batch, in = plan.in, out = plan.out;
  const bool want_dx = a.dx.present, want_dw = a.dw.present, want_db = a.db.present;
  const bool below_db = a.below_db.present && in > 0;
  const Device dev = plan.device;
  const int dev_index = plan.device_index;
  if (want_dx && batch * in > 0) {
    // dX [batch, in] = dY [batch, out] W [out, in]; with below_gelu the layer below's GELU
    // gradient (DGELU on below_aux, y's shape) and its bias gradient (the sums over dx's rows).
    GemmViewArgs g;
    g.a = as_matrix(a.dy, batch, out);
    g.b = as_matrix(a.w, out, in);
    g.d = as_matrix(a.dx, batch, in);
    g.fp16_mode = a.fp16_mode;
    if (a.below_gelu) {
      g.epilogue = below_db ? Epilogue::DGELU_BGRAD : Epilogue::DGELU;
      g.gelu = a.below_gelu_variant;
      g.aux = as_matrix(a.below_aux, batch, in);
      if (below_db) {
        g.bias_grad = as_vector(a.below_db, in);
        g.accumulate_bias_grad = a.accumulate;
      }
    }
    plan.dx = ops::column_major_gemm(g);
    plan.run_dx = true;
  }
  plan.zero_below_db = below_db && batch == 0 && !a.accumulate;

  if (want_dw && out * in > 0) {
    // dW [out, in] = dYᵀ [out, batch] X [batch, in] (+ dW when accumulating); BGRADA sums
    // op(dY) over k = batch: db [out].
    GemmViewArgs g;
    g.op_a = Op::T;
    g.a = as_matrix(a.dy, batch, out);
    g.b = as_matrix(a.x, batch, in);
    g.d = as_matrix(a.dw, out, in);
    if (a.accumulate) {
      g.beta = 1.0f;
      g.c = g.d;
    }
    g.fp16_mode = a.fp16_mode;
    if (want_db) {
      g.epilogue = Epilogue::BGRADA;
      g.bias_grad = as_vector(a.db, out);
      g.accumulate_bias_grad = a.accumulate;
    }
    plan.dw = ops::column_major_gemm(g);
    plan.run_dw = true;
  } else if (want_db && out > 0) {
    plan.run_db_alone = true;  // its GEMM is planned at each run (plan_db_alone)
  }
}

// db without dw (or with in = 0): the same reduction, BGRADA of dYᵀ [out, batch] times a column of
// ones [batch, 1]; the product [out, 1] goes to scratch. Planned at each run, because the
// scratch is the calling thread's workspace, which may move between calls.
GemmArgs plan_db_alone(const LinearBackwardArgs& a, std::int64_t batch, std::int64_t out, Device dev, int dev_index) {
  const std::int64_t product_bytes = out * static_cast<std::int64_t>(dtype_size(a.db.dtype));
  const DbScratch scratch = db_scratch(batch, product_bytes);
  GemmViewArgs g;
  g.op_a = Op::T;
  g.a = as_matrix(a.dy, batch, out);
  g.b = as_matrix(scratch.ones, DType::f32, dev, dev_index, batch, 1);
  g.d = as_matrix(scratch.product, a.db.dtype, dev, dev_index, out, 1);
  g.fp16_mode = a.fp16_mode;
  g.epilogue = Epilogue::BGRADA;
  g.bias_grad = as_vector(a.db, out);
  g.accumulate_bias_grad = a.accumulate;
  return ops::column_major_gemm(g);
}

}  // namespace

namespace {

// The fp16 mode is in the GEMM problems and in their selection: a run with another mode than the
// prepared one prepares the call again (validation included).
template <class Call, class Prepare>
void keyed_on_mode(Call& call, Fp16Mode mode, Prepare prepare) {
  if (mode == call.args.fp16_mode) return;
  auto args = call.args;
  args.fp16_mode = mode;
  call = prepare(args);
}

}  // namespace

PreparedLinearForward prepare_linear_forward(const LinearForwardArgs& args) {
  PreparedLinearForward call;
  call.args = args;
  const GemmArgs g = plan_forward(args);
  call.empty = g.m == 0 || g.n == 0;  // y is empty
  if (!call.empty) call.gemm = ops::prepare_gemm(g, true);
  return call;
}

void run_prepared(PreparedLinearForward& call, Fp16Mode mode, LinearReport& report) {
  keyed_on_mode(call, mode, prepare_linear_forward);
  report = LinearReport{};
  if (call.empty) return;
  ops::run_prepared(call.gemm, &report.gemms[report.gemm_count++]);
}

PreparedLinearBackward prepare_linear_backward(const LinearBackwardArgs& args) {
  PreparedLinearBackward call;
  call.args = args;
  BackwardPlan plan;
  validate_backward(args, plan);
  if (!args.dy.present) {
    call.nothing = true;
    return call;
  }
  plan_backward(args, plan);
  // Every GEMM is valid (validate_backward covers gemm's checks); none of them reads what
  // another writes (checked above).
  call.run_dx = plan.run_dx;
  call.run_dw = plan.run_dw;
  call.run_db_alone = plan.run_db_alone;
  call.zero_below_db = plan.zero_below_db;
  if (plan.run_dx) call.dx = ops::prepare_gemm(plan.dx, true);
  if (plan.run_dw) call.dw = ops::prepare_gemm(plan.dw, true);
  call.batch = plan.batch;
  call.in = plan.in;
  call.out = plan.out;
  call.device = plan.device;
  call.device_index = plan.device_index;
  return call;
}

void run_prepared(PreparedLinearBackward& call, Fp16Mode mode, LinearReport& report) {
  keyed_on_mode(call, mode, prepare_linear_backward);
  report = LinearReport{};
  if (call.nothing) return;
  // The db GEMM's scratch first, so no GEMM has written when it cannot be had.
  GemmArgs db_alone;
  if (call.run_db_alone) db_alone = plan_db_alone(call.args, call.batch, call.out, call.device, call.device_index);
  if (call.run_dx) ops::run_prepared(call.dx, &report.gemms[report.gemm_count++]);
  if (call.zero_below_db) {
    const std::size_t bytes = static_cast<std::size_t>(call.in) * dtype_size(call.args.below_db.dtype);
    // All-zero bits are +0. A cpu view's device_index is not checked (only cuda's means something).
    const int index = call.device == Device::cuda ? call.device_index : 0;
    ops::backend(call.device).fill_bytes(call.args.below_db.data, 0, bytes, index);
  }
  if (call.run_dw) ops::run_prepared(call.dw, &report.gemms[report.gemm_count++]);
  if (call.run_db_alone) gemm(db_alone, &report.gemms[report.gemm_count++]);
}

void linear_forward(const LinearForwardArgs& args, LinearReport* report) {
  PreparedLinearForward call = prepare_linear_forward(args);
  LinearReport local;
  run_prepared(call, args.fp16_mode, report != nullptr ? *report : local);
}

void linear_backward(const LinearBackwardArgs& args, LinearReport* report) {
  PreparedLinearBackward call = prepare_linear_backward(args);
  LinearReport local;
  run_prepared(call, args.fp16_mode, report != nullptr ? *report : local);
}

std::string linear_check(const LinearForwardArgs& args) noexcept {
  return ops::check_message(kForward, [&] { plan_forward(args); });
}

std::string linear_check(const LinearBackwardArgs& args) noexcept {
  return ops::check_message(kBackward, [&] {
    BackwardPlan plan;
    validate_backward(args, plan);
  });
}

std::string linear_descriptor_check(const LinearForwardArgs& args) noexcept {
  return ops::check_message(kForward, [&] { plan_forward(args, ops::Stage::descriptor); });
}

std::string linear_descriptor_check(const LinearBackwardArgs& args) noexcept {
  return ops::check_message(kBackward, [&] {
    BackwardPlan plan;
    validate_backward(args, plan, ops::Stage::descriptor);
  });
}

const char* linear_kernel_name(const LinearForwardArgs& args) { return gemm_kernel_name(plan_forward(args)); }

}  // namespace ampkit
