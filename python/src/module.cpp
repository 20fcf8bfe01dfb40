// The extension module ampkit._ampkit (docs/PYTHON.md): thin bindings over the public C++ API.
// Every op is bound three times from one argument builder: the call (outputs given, the GIL
// released while the kernel runs), <op>_check ("" or the message the call would throw) and
// <op>_kernel_name. Tensors come in through tensors.hpp without a copy; ampkit::Error leaves as
// the Python exception of its ErrorKind. The pure-Python package (python/ampkit/) allocates
// outputs that are not given.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/gemm_views.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "tensors.hpp"

namespace ampkit::python {
namespace {

using py::arg;
using Obj = py::object;

// ---- exceptions -------------------------------------------------------------------------------

PyObject* exc_base = nullptr;
PyObject* exc_invalid = nullptr;
PyObject* exc_unsupported = nullptr;
PyObject* exc_oom = nullptr;
PyObject* exc_internal = nullptr;

PyObject* new_exception(py::module_& m, const char* name, PyObject* base1, PyObject* base2, const char* doc) {
  py::tuple bases = base2 ? py::make_tuple(py::handle(base1), py::handle(base2)) : py::make_tuple(py::handle(base1));
  PyObject* e = PyErr_NewExceptionWithDoc((std::string("ampkit.") + name).c_str(), doc, bases.ptr(), nullptr);
  if (!e) throw py::error_already_set();
  m.add_object(name, py::handle(e));
  return e;
}

void register_exceptions(py::module_& m) {
  exc_base = new_exception(m, "Error", PyExc_Exception, nullptr, "Every error ampkit raises (ampkit::Error).");
  exc_invalid = new_exception(m, "InvalidArgumentError", exc_base, PyExc_ValueError,
                              "ErrorKind::invalid_argument: the call does not accept an argument.");
  exc_unsupported = new_exception(m, "UnsupportedError", exc_base, PyExc_NotImplementedError,
                                  "ErrorKind::unsupported: valid, but this build, machine or backend cannot do it.");
  exc_oom = new_exception(m, "OutOfMemoryError", exc_base, PyExc_MemoryError,
                          "ErrorKind::out_of_memory: an allocation the call needed failed.");
  exc_internal = new_exception(m, "InternalError", exc_base, PyExc_RuntimeError,
                               "ErrorKind::internal: a bug in ampkit (an invariant did not hold).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = e.kind() == ErrorKind::invalid_argument ? exc_invalid
                       : e.kind() == ErrorKind::unsupported    ? exc_unsupported
                       : e.kind() == ErrorKind::out_of_memory  ? exc_oom
                                                               : exc_internal;
      PyErr_SetString(type, e.what());
    }
  });
}

// ---- argument parsing -------------------------------------------------------------------------

template <typename E, std::size_t N>
E parse_enum(const std::string& text, const std::array<std::pair<const char*, E>, N>& table, const char* function,
             const char* name) {
  for (const auto& [spelling, value] : table)
    if (text == spelling) return value;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) expected += (i ? ", " : "") + std::string(table[i].first);
  fail(function, name, ": expected one of ", expected, ", but got '", text, "'");
}

Op parse_op(const std::string& t, const char* f, const char* n) {
  return parse_enum<Op, 2>(t, {{{"N", Op::N}, {"T", Op::T}}}, f, n);
}
GeluVariant parse_gelu(const std::string& t, const char* f, const char* n) {
  return parse_enum<GeluVariant, 2>(t, {{{"tanh", GeluVariant::tanh}, {"erf", GeluVariant::erf}}}, f, n);
}
Fp16Mode parse_mode(const std::string& t, const char* f, const char* n) {
  return parse_enum<Fp16Mode, 3>(t, {{{"exact", Fp16Mode::exact}, {"flush", Fp16Mode::flush}, {"alt", Fp16Mode::alt}}},
                                 f, n);
}
Epilogue parse_epilogue(const std::string& t, const char* f) {
  for (int i = 0; i <= static_cast<int>(Epilogue::BGRADB); ++i)
    if (t == epilogue_name(static_cast<Epilogue>(i))) return static_cast<Epilogue>(i);
  std::string expected;
  for (int i = 0; i <= static_cast<int>(Epilogue::BGRADB); ++i)
    expected += (i ? ", " : "") + std::string(epilogue_name(static_cast<Epilogue>(i)));
  fail(f, "epilogue: expected one of ", expected, ", but got '", t, "'");
}

// fp16_mode=None: the policy decides on this thread (the pass, the environment, the API), and the
// call's report goes to the process-wide counters: what gemm_with_policy does. A given mode is
// forced and not counted, as a direct gemm() call.
struct Policy {
  Fp16Mode mode = Fp16Mode::exact;
  bool count = false;
};
Policy policy_for(const Obj& fp16_mode, std::initializer_list<DType> operands, const char* f) {
  if (!fp16_mode.is_none()) return {parse_mode(fp16_mode.cast<std::string>(), f, "fp16_mode"), false};
  const bool fp16 = is_fp16_gemm(operands);
  return {fp16 ? gemm_fp16_mode() : Fp16Mode::exact, fp16};
}

// ---- binding one op three times -----------------------------------------------------------

template <typename F>
struct builder_traits : builder_traits<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct builder_traits<R (C::*)(Borrowed&, A...) const> {
  using args = std::tuple<A...>;
};

template <typename Build, typename Call, typename Check, typename Kernel, typename... A, typename... Extra>
void def_op_impl(py::module_& m, const std::string& name, Build build, Call call, Check check, Kernel kernel,
                 std::tuple<A...>*, const char* doc, const Extra&... extra) {
  m.def(
      name.c_str(),
      [build, call](A... a) {
        Borrowed keep;
        auto args = build(keep, a...);
        py::gil_scoped_release nogil;
        call(args);
      },
      extra..., doc);
  m.def((name + "_check").c_str(),
        [build, check](A... a) -> std::string {
          try {
            Borrowed keep;
            auto args = build(keep, a...);
            return check(args);
          } catch (const Error& e) {
            return e.what();
          }
        },
        extra..., ("\"\" when " + name + " would run with these arguments, else the message it would raise.").c_str());
  if constexpr (!std::is_same_v<Kernel, std::nullptr_t>) {
    m.def((name + "_kernel_name").c_str(),
          [build, kernel](A... a) -> std::string {
            Borrowed keep;
            auto args = build(keep, a...);
            return kernel(args);
          },
          extra..., ("The kernel " + name + " would run now; raises like the call.").c_str());
  }
}

template <typename Build, typename Call, typename Check, typename Kernel, typename... Extra>
void def_op(py::module_& m, const std::string& name, Build build, Call call, Check check, Kernel kernel,
            const char* doc, const Extra&... extra) {
  def_op_impl(m, name, build, call, check, kernel, static_cast<typename builder_traits<Build>::args*>(nullptr), doc,
              extra...);
}

// ---- GEMM, column-major (the BLAS convention of GemmArgs) -------------------------------------

// A column-major matrix: rank 2, shape (rows, cols), strides (1, ld); in torch, the transpose of
// a row-major tensor (t.T, or torch.empty(cols, rows).T).
struct ColMajor {
  void* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
};
ColMajor col_major(const TensorView& v, const char* f, const char* name) {
  if (v.rank != 2) fail(f, name, ": expected a column-major matrix (rank 2), but got ", v.describe());
  ColMajor c{v.data, v.shape[0], v.shape[1], v.strides[1]};
  if (c.rows > 1 && v.strides[0] != 1)
    fail(f, name, ": expected a column-major matrix (strides [1, ld]), but got strides [", v.strides[0], ", ",
         v.strides[1], "] (a row-major tensor t is column-major as t.T; or use gemm_row_major)");
  if (c.cols <= 1) c.ld = std::max<std::int64_t>(1, c.rows);
  return c;
}
void expect_shape(const ColMajor& c, std::int64_t rows, std::int64_t cols, const char* f, const char* name) {
  if (c.rows != rows || c.cols != cols)
    fail(f, name, ": expected shape [", rows, ", ", cols, "], but got [", c.rows, ", ", c.cols, "]");
}
void expect_vector(const TensorView& v, std::int64_t n, const char* f, const char* name) {
  if (v.rank != 1 || v.shape[0] != n || (n > 1 && v.strides[0] != 1))
    fail(f, name, ": expected a contiguous vector [", n, "], but got ", v.describe());
}

struct GemmCall {
  GemmArgs args;
  Policy policy;
};

constexpr const char* kGemm = "ampkit.gemm";

GemmCall build_gemm(Borrowed& keep, Obj a, Obj b, Obj d, Obj c, const std::string& op_a, const std::string& op_b,
                    float alpha, float beta, const std::string& epilogue, const std::string& gelu, Obj bias, Obj aux,
                    Obj bias_grad, bool accumulate_bias_grad, Obj fp16_mode) {
  const char* f = kGemm;
  GemmCall g;
  GemmArgs& x = g.args;
  const TensorView va = keep.view(a, f, "a"), vb = keep.view(b, f, "b"), vd = keep.view(d, f, "d", true);
  const TensorView vc = keep.view(c, f, "c");
  if (!va.present || !vb.present || !vd.present) fail(f, "a, b and d must be tensors");
  x.op_a = parse_op(op_a, f, "op_a");
  x.op_b = parse_op(op_b, f, "op_b");
  const ColMajor ma = col_major(va, f, "a"), mb = col_major(vb, f, "b"), md = col_major(vd, f, "d");
  x.m = md.rows;
  x.n = md.cols;
  x.k = x.op_a == Op::N ? ma.cols : ma.rows;
  expect_shape(ma, x.op_a == Op::N ? x.m : x.k, x.op_a == Op::N ? x.k : x.m, f, "a");
  expect_shape(mb, x.op_b == Op::N ? x.k : x.n, x.op_b == Op::N ? x.n : x.k, f, "b");
  x.alpha = alpha;
  x.beta = beta;
  x.a = ma.data, x.a_dtype = va.dtype, x.lda = ma.ld;
  x.b = mb.data, x.b_dtype = vb.dtype, x.ldb = mb.ld;
  x.d = md.data, x.d_dtype = vd.dtype, x.ldd = md.ld;
  x.device = vd.device;
  x.device_index = vd.device_index;
  if (vc.present) {
    const ColMajor mc = col_major(vc, f, "c");
    expect_shape(mc, x.m, x.n, f, "c");
    x.c = mc.data, x.c_dtype = vc.dtype, x.ldc = mc.ld;
  } else {
    x.c_dtype = vd.dtype;
  }
  GemmEpilogue& e = x.epilogue;
  e.kind = parse_epilogue(epilogue, f);
  e.gelu = parse_gelu(gelu, f, "gelu");
  e.accumulate_bias_grad = accumulate_bias_grad;
  const TensorView vbias = keep.view(bias, f, "bias"), vaux = keep.view(aux, f, "aux", true);
  const TensorView vbg = keep.view(bias_grad, f, "bias_grad", true);
  if (vbias.present) {
    expect_vector(vbias, x.m, f, "bias");
    e.bias = vbias.data, e.bias_dtype = vbias.dtype;
  }
  if (vbg.present) {
    expect_vector(vbg, e.kind == Epilogue::BGRADB ? x.n : x.m, f, "bias_grad");
    e.bias_grad = vbg.data, e.bias_dtype = vbg.dtype;
  }
  if (vaux.present) {
    const ColMajor mx = col_major(vaux, f, "aux");
    expect_shape(mx, x.m, x.n, f, "aux");
    e.aux = mx.data, e.aux_dtype = vaux.dtype, e.aux_ld = mx.ld;
  }
  for (const TensorView* v : {&va, &vb, &vc, &vbias, &vaux, &vbg})
    if (v->present && (v->device != vd.device || v->device_index != vd.device_index))
      fail(f, "every operand must be in the memory of one device: d is ", vd.describe(), ", but another is ",
           v->describe());
  g.policy = policy_for(fp16_mode, {va.dtype, vb.dtype}, f);
  x.fp16_mode = g.policy.mode;
  return g;
}

template <typename Args>
void run_gemm(const Args& args, const Policy& policy) {
  if (!policy.count) return gemm(args);
  GemmReport report;
  gemm(args, &report);
  add_fp16_gemm_report(report);
}

// ---- GEMM on row-major views (gemm_views.hpp) --------------------------------------------------

struct GemmViewCall {
  GemmViewArgs args;
  Policy policy;
};

GemmViewCall build_gemm_rm(Borrowed& keep, Obj a, Obj b, Obj d, Obj c, const std::string& op_a, const std::string& op_b,
                           float alpha, float beta, const std::string& epilogue, const std::string& gelu, Obj bias,
                           Obj aux, Obj bias_grad, bool accumulate_bias_grad, Obj fp16_mode) {
  const char* f = "ampkit.gemm_row_major";
  GemmViewCall g;
  GemmViewArgs& x = g.args;
  x.a = keep.view(a, f, "a");
  x.b = keep.view(b, f, "b");
  x.c = keep.view(c, f, "c");
  x.d = keep.view(d, f, "d", true);
  x.op_a = parse_op(op_a, f, "op_a");
  x.op_b = parse_op(op_b, f, "op_b");
  x.alpha = alpha;
  x.beta = beta;
  x.epilogue = parse_epilogue(epilogue, f);
  x.gelu = parse_gelu(gelu, f, "gelu");
  x.bias = keep.view(bias, f, "bias");
  x.aux = keep.view(aux, f, "aux", true);
  x.bias_grad = keep.view(bias_grad, f, "bias_grad", true);
  x.accumulate_bias_grad = accumulate_bias_grad;
  g.policy = policy_for(fp16_mode, {x.a.dtype, x.b.dtype}, f);
  x.fp16_mode = g.policy.mode;
  return g;
}

// ---- Linear ----------------------------------------------------------------------------------

struct LinearFwdCall {
  LinearForwardArgs args;
  Policy policy;
};
struct LinearBwdCall {
  LinearBackwardArgs args;
  Policy policy;
};

void run_linear(const LinearForwardArgs& args, const Policy& policy) {
  if (!policy.count) return linear_forward(args);
  LinearReport report;
  linear_forward(args, &report);
  for (int i = 0; i < report.gemm_count; ++i) add_fp16_gemm_report(report.gemms[i]);
}
void run_linear(const LinearBackwardArgs& args, const Policy& policy) {
  if (!policy.count) return linear_backward(args);
  LinearReport report;
  linear_backward(args, &report);
  for (int i = 0; i < report.gemm_count; ++i) add_fp16_gemm_report(report.gemms[i]);
}

// ---- the fp16 policy's guard as a context manager ----------------------------------------------

struct BackwardPass {
  explicit BackwardPass(bool b) : backward(b) {}
  BackwardPass(const BackwardPass&) = delete;
  BackwardPass(BackwardPass&&) = default;
  bool backward = true;
  std::vector<std::unique_ptr<BackwardPassGuard>> guards;  // nested re-entry of one object
  void enter() { guards.push_back(std::make_unique<BackwardPassGuard>(backward)); }
  void exit() {
    if (!guards.empty()) guards.pop_back();
  }
};

py::dict counters_dict(const Fp16Counters& c) {
  py::dict d;
  for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
    py::dict m;
    m["gemm_calls"] = c[mode].gemm_calls;
    m["subnormal_inputs"] = c[mode].subnormal_inputs;
    m["subnormal_outputs"] = c[mode].subnormal_outputs;
    d[py::str(std::string(fp16_mode_name(mode)))] = m;
  }
  return d;
}

std::vector<TensorView> views_of(Borrowed& keep, const py::sequence& seq, const char* f, const char* name) {
  std::vector<TensorView> views;
  views.reserve(seq.size());
  for (py::handle h : seq) {
    views.push_back(keep.view(h, f, name));
    if (!views.back().present) fail(f, name, ": expected tensors, but got None");
  }
  return views;
}

}  // namespace

void init_module(py::module_& m) {
  m.doc() = "ampkit's C++ API (docs/PYTHON.md); use the package ampkit, which allocates the outputs.";
  register_exceptions(m);
  bind_tensors(m);

  // GEMM, both conventions.
  const auto gemm_args = std::make_tuple(arg("a"), arg("b"), arg("d"), py::kw_only(), arg("c") = py::none(),
                                         arg("op_a") = "N", arg("op_b") = "N", arg("alpha") = 1.0f, arg("beta") = 0.0f,
                                         arg("epilogue") = "DEFAULT", arg("gelu") = "tanh", arg("bias") = py::none(),
                                         arg("aux") = py::none(), arg("bias_grad") = py::none(),
                                         arg("accumulate_bias_grad") = false, arg("fp16_mode") = py::none());
  std::apply(
      [&](const auto&... a) {
        def_op(
            m, "gemm",
            [](Borrowed& k, Obj a_, Obj b_, Obj d_, Obj c_, std::string oa, std::string ob, float al, float be,
               std::string ep, std::string ge, Obj bi, Obj au, Obj bg, bool acc,
               Obj mode) { return build_gemm(k, a_, b_, d_, c_, oa, ob, al, be, ep, ge, bi, au, bg, acc, mode); },
            [](const GemmCall& g) { run_gemm(g.args, g.policy); }, [](const GemmCall& g) { return gemm_check(g.args); },
            [](const GemmCall& g) { return gemm_kernel_name(g.args); },
            "D = epilogue(alpha op(A) op(B) + beta C), column-major matrices (shape (rows, cols), strides (1, ld)).",
            a...);
        def_op(
            m, "gemm_row_major",
            [](Borrowed& k, Obj a_, Obj b_, Obj d_, Obj c_, std::string oa, std::string ob, float al, float be,
               std::string ep, std::string ge, Obj bi, Obj au, Obj bg, bool acc,
               Obj mode) { return build_gemm_rm(k, a_, b_, d_, c_, oa, ob, al, be, ep, ge, bi, au, bg, acc, mode); },
            [](const GemmViewCall& g) { run_gemm(g.args, g.policy); },
            [](const GemmViewCall& g) { return gemm_check(g.args); },
            [](const GemmViewCall& g) { return gemm_kernel_name(g.args); },
            "d = epilogue(alpha op(a) op(b) + beta c), row-major matrices (gemm_views.hpp).", a...);
      },
      gemm_args);

  // Linear.
  def_op(
      m, "linear_forward",
      [](Borrowed& k, Obj x, Obj w, Obj y, Obj bias, bool gelu, std::string variant, Obj aux, Obj mode) {
        const char* f = "ampkit.linear_forward";
        LinearFwdCall c;
        c.args.x = k.view(x, f, "x");
        c.args.w = k.view(w, f, "w");
        c.args.y = k.view(y, f, "y", true);
        c.args.bias = k.view(bias, f, "bias");
        c.args.gelu = gelu;
        c.args.gelu_variant = parse_gelu(variant, f, "gelu_variant");
        c.args.aux = k.view(aux, f, "aux", true);
        c.policy = policy_for(mode, {c.args.x.dtype, c.args.w.dtype}, f);
        c.args.fp16_mode = c.policy.mode;
        return c;
      },
      [](const LinearFwdCall& c) { run_linear(c.args, c.policy); },
      [](const LinearFwdCall& c) { return linear_check(c.args); },
      [](const LinearFwdCall& c) { return linear_kernel_name(c.args); }, "y = act(x w^T + bias) (layers/linear.hpp).",
      arg("x"), arg("w"), arg("y"), py::kw_only(), arg("bias") = py::none(), arg("gelu") = false,
      arg("gelu_variant") = "tanh", arg("aux") = py::none(), arg("fp16_mode") = py::none());
  def_op(
      m, "linear_backward",
      [](Borrowed& k, Obj dy, Obj x, Obj w, Obj dx, Obj dw, Obj db, bool accumulate, bool below_gelu,
         std::string variant, Obj below_aux, Obj below_db, Obj mode) {
        const char* f = "ampkit.linear_backward";
        LinearBwdCall c;
        LinearBackwardArgs& a = c.args;
        a.dy = k.view(dy, f, "dy");
        a.x = k.view(x, f, "x");
        a.w = k.view(w, f, "w");
        a.dx = k.view(dx, f, "dx", true);
        a.dw = k.view(dw, f, "dw", true);
        a.db = k.view(db, f, "db", true);
        a.accumulate = accumulate;
        a.below_gelu = below_gelu;
        a.below_gelu_variant = parse_gelu(variant, f, "below_gelu_variant");
        a.below_aux = k.view(below_aux, f, "below_aux");
        a.below_db = k.view(below_db, f, "below_db", true);
        // Both GEMMs read dy; dx's reads w, dw's reads x.
        c.policy = policy_for(
            mode, {a.dy.dtype, a.w.present ? a.w.dtype : a.dy.dtype, a.x.present ? a.x.dtype : a.dy.dtype}, f);
        a.fp16_mode = c.policy.mode;
        return c;
      },
      [](const LinearBwdCall& c) { run_linear(c.args, c.policy); },
      [](const LinearBwdCall& c) { return linear_check(c.args); }, nullptr,
      "dx = dy w, dw = dy^T x, db = sum dy, with the fused GELU-backward of the layer below.", arg("dy"), py::kw_only(),
      arg("x") = py::none(), arg("w") = py::none(), arg("dx") = py::none(), arg("dw") = py::none(),
      arg("db") = py::none(), arg("accumulate") = false, arg("below_gelu") = false, arg("below_gelu_variant") = "tanh",
      arg("below_aux") = py::none(), arg("below_db") = py::none(), arg("fp16_mode") = py::none());

  // The norms.
  for (NormKind kind : {NormKind::layer, NormKind::rms}) {
    const std::string base = kind == NormKind::layer ? "layer_norm" : "rms_norm";
    def_op(
        m, base + "_forward",
        [kind](Borrowed& k, Obj x, Obj y, Obj gamma, Obj beta, float eps, Obj mean, Obj rstd, int normalized_rank) {
          const char* f = kind == NormKind::layer ? "ampkit.layer_norm_forward" : "ampkit.rms_norm_forward";
          NormForwardArgs a;
          a.x = k.view(x, f, "x");
          a.y = k.view(y, f, "y", true);
          a.gamma = k.view(gamma, f, "gamma");
          a.beta = k.view(beta, f, "beta");
          a.eps = eps;
          a.mean = k.view(mean, f, "mean", true);
          a.rstd = k.view(rstd, f, "rstd", true);
          a.normalized_rank = normalized_rank;
          return a;
        },
        [kind](const NormForwardArgs& a) { kind == NormKind::layer ? layer_norm_forward(a) : rms_norm_forward(a); },
        [kind](const NormForwardArgs& a) { return norm_check(kind, a); },
        [kind](const NormForwardArgs& a) { return norm_kernel_name(kind, a); }, "The norm's forward (ops/norm.hpp).",
        arg("x"), arg("y"), py::kw_only(), arg("gamma") = py::none(), arg("beta") = py::none(), arg("eps") = 1e-5f,
        arg("mean") = py::none(), arg("rstd") = py::none(), arg("normalized_rank") = 1);
    def_op(
        m, base + "_backward",
        [kind](Borrowed& k, Obj dy, Obj x, Obj mean, Obj rstd, Obj gamma, Obj dx, Obj dgamma, Obj dbeta,
               bool accumulate, int normalized_rank) {
          const char* f = kind == NormKind::layer ? "ampkit.layer_norm_backward" : "ampkit.rms_norm_backward";
          NormBackwardArgs a;
          a.dy = k.view(dy, f, "dy");
          a.x = k.view(x, f, "x");
          a.mean = k.view(mean, f, "mean");
          a.rstd = k.view(rstd, f, "rstd");
          a.gamma = k.view(gamma, f, "gamma");
          a.dx = k.view(dx, f, "dx", true);
          a.dgamma = k.view(dgamma, f, "dgamma", true);
          a.dbeta = k.view(dbeta, f, "dbeta", true);
          a.accumulate = accumulate;
          a.normalized_rank = normalized_rank;
          return a;
        },
        [kind](const NormBackwardArgs& a) { kind == NormKind::layer ? layer_norm_backward(a) : rms_norm_backward(a); },
        [kind](const NormBackwardArgs& a) { return norm_check(kind, a); },
        [kind](const NormBackwardArgs& a) { return norm_kernel_name(kind, a); }, "The norm's backward (ops/norm.hpp).",
        arg("dy"), py::kw_only(), arg("x") = py::none(), arg("mean") = py::none(), arg("rstd") = py::none(),
        arg("gamma") = py::none(), arg("dx") = py::none(), arg("dgamma") = py::none(), arg("dbeta") = py::none(),
        arg("accumulate") = false, arg("normalized_rank") = 1);
  }

  // convert, GELU.
  using ViewPair = std::pair<TensorView, TensorView>;
  def_op(
      m, "convert",
      [](Borrowed& k, Obj src, Obj dst) {
        return ViewPair{k.view(src, "ampkit.convert", "src"), k.view(dst, "ampkit.convert", "dst", true)};
      },
      [](const ViewPair& p) { convert(p.first, p.second); },
      [](const ViewPair& p) { return convert_check(p.first, p.second); },
      [](const ViewPair& p) { return convert_kernel_name(p.first, p.second); },
      "dst = src rounded to dst's dtype (ops/convert.hpp).", arg("src"), arg("dst"));
  struct GeluArgs {
    TensorView x, dy, out;
    GeluVariant variant;
  };
  def_op(
      m, "gelu_forward",
      [](Borrowed& k, Obj x, Obj y, std::string variant) {
        const char* f = "ampkit.gelu_forward";
        return GeluArgs{k.view(x, f, "x"), {}, k.view(y, f, "y", true), parse_gelu(variant, f, "variant")};
      },
      [](const GeluArgs& a) { gelu_forward(a.x, a.out, a.variant); },
      [](const GeluArgs& a) { return gelu_forward_check(a.x, a.out, a.variant); },
      [](const GeluArgs& a) { return gelu_forward_kernel_name(a.x, a.out, a.variant); }, "y = gelu(x).", arg("x"),
      arg("y"), py::kw_only(), arg("variant") = "tanh");
  def_op(
      m, "gelu_backward",
      [](Borrowed& k, Obj x, Obj dy, Obj dx, std::string variant) {
        const char* f = "ampkit.gelu_backward";
        return GeluArgs{k.view(x, f, "x"), k.view(dy, f, "dy"), k.view(dx, f, "dx", true),
                        parse_gelu(variant, f, "variant")};
      },
      [](const GeluArgs& a) { gelu_backward(a.x, a.dy, a.out, a.variant); },
      [](const GeluArgs& a) { return gelu_backward_check(a.x, a.dy, a.out, a.variant); },
      [](const GeluArgs& a) { return gelu_backward_kernel_name(a.x, a.dy, a.out, a.variant); }, "dx = dy * gelu'(x).",
      arg("x"), arg("dy"), arg("dx"), py::kw_only(), arg("variant") = "tanh");

  // Attention.
  def_op(
      m, "attention_forward",
      [](Borrowed& k, Obj q, Obj kk, Obj v, Obj out, Obj lse, int heads, float scale) {
        const char* f = "ampkit.attention_forward";
        AttentionForwardArgs a;
        a.q = k.view(q, f, "q");
        a.k = k.view(kk, f, "k");
        a.v = k.view(v, f, "v");
        a.out = k.view(out, f, "out", true);
        a.lse = k.view(lse, f, "lse", true);
        a.heads = heads;
        a.scale = scale;
        return a;
      },
      [](const AttentionForwardArgs& a) { attention_forward(a); },
      [](const AttentionForwardArgs& a) { return attention_check(a); },
      [](const AttentionForwardArgs& a) { return attention_kernel_name(a); },
      "Causal multi-head attention (ops/attention.hpp).", arg("q"), arg("k"), arg("v"), arg("out"), arg("lse"),
      py::kw_only(), arg("heads") = 1, arg("scale") = 0.0f);
  def_op(
      m, "attention_backward",
      [](Borrowed& k, Obj q, Obj kk, Obj v, Obj out, Obj lse, Obj dout, Obj dq, Obj dk, Obj dv, int heads, float scale,
         bool accumulate) {
        const char* f = "ampkit.attention_backward";
        AttentionBackwardArgs a;
        a.q = k.view(q, f, "q");
        a.k = k.view(kk, f, "k");
        a.v = k.view(v, f, "v");
        a.out = k.view(out, f, "out");
        a.lse = k.view(lse, f, "lse");
        a.dout = k.view(dout, f, "dout");
        a.dq = k.view(dq, f, "dq", true);
        a.dk = k.view(dk, f, "dk", true);
        a.dv = k.view(dv, f, "dv", true);
        a.heads = heads;
        a.scale = scale;
        a.accumulate = accumulate;
        return a;
      },
      [](const AttentionBackwardArgs& a) { attention_backward(a); },
      [](const AttentionBackwardArgs& a) { return attention_check(a); },
      [](const AttentionBackwardArgs& a) { return attention_kernel_name(a); }, "Gradients of attention_forward.",
      arg("q"), arg("k"), arg("v"), arg("out"), arg("lse"), arg("dout"), py::kw_only(), arg("dq") = py::none(),
      arg("dk") = py::none(), arg("dv") = py::none(), arg("heads") = 1, arg("scale") = 0.0f, arg("accumulate") = false);

  // Softmax cross-entropy.
  struct SceArgs {
    TensorView logits, targets, loss, lse, dlogits{};
    float dloss = 0.0f;
  };
  def_op(
      m, "softmax_cross_entropy_forward",
      [](Borrowed& k, Obj logits, Obj targets, Obj loss, Obj lse) {
        const char* f = "ampkit.softmax_cross_entropy_forward";
        return SceArgs{k.view(logits, f, "logits"),
                       k.view(targets, f, "targets"),
                       k.view(loss, f, "loss", true),
                       k.view(lse, f, "lse", true),
                       {}};
      },
      [](const SceArgs& a) { softmax_cross_entropy_forward(a.logits, a.targets, a.loss, a.lse); },
      [](const SceArgs& a) { return softmax_cross_entropy_forward_check(a.logits, a.targets, a.loss, a.lse); },
      [](const SceArgs& a) { return softmax_cross_entropy_forward_kernel_name(a.logits, a.targets, a.loss, a.lse); },
      "loss = mean(lse - logits[target]).", arg("logits"), arg("targets"), arg("loss"), arg("lse"));
  def_op(
      m, "softmax_cross_entropy_backward",
      [](Borrowed& k, Obj logits, Obj targets, Obj lse, float dloss, Obj dlogits) {
        const char* f = "ampkit.softmax_cross_entropy_backward";
        SceArgs a{k.view(logits, f, "logits"),
                  k.view(targets, f, "targets"),
                  {},
                  k.view(lse, f, "lse"),
                  k.view(dlogits, f, "dlogits", true)};
        a.dloss = dloss;
        return a;
      },
      [](const SceArgs& a) { softmax_cross_entropy_backward(a.logits, a.targets, a.lse, a.dloss, a.dlogits); },
      [](const SceArgs& a) {
        return softmax_cross_entropy_backward_check(a.logits, a.targets, a.lse, a.dloss, a.dlogits);
      },
      [](const SceArgs& a) {
        return softmax_cross_entropy_backward_kernel_name(a.logits, a.targets, a.lse, a.dloss, a.dlogits);
      },
      "dlogits of the mean loss.", arg("logits"), arg("targets"), arg("lse"), arg("dloss"), arg("dlogits"));

  // Optimizers.
  def_op(
      m, "adamw_step",
      [](Borrowed& k, Obj param, Obj grad, Obj mm, Obj v, float lr, std::int64_t step, Obj param_copy, float beta1,
         float beta2, float eps, float weight_decay, float grad_scale) {
        const char* f = "ampkit.adamw_step";
        AdamWArgs a;
        a.param = k.view(param, f, "param", true);
        a.grad = k.view(grad, f, "grad");
        a.m = k.view(mm, f, "m", true);
        a.v = k.view(v, f, "v", true);
        a.param_copy = k.view(param_copy, f, "param_copy", true);
        a.lr = lr, a.beta1 = beta1, a.beta2 = beta2, a.eps = eps, a.weight_decay = weight_decay;
        a.grad_scale = grad_scale, a.step = step;
        return a;
      },
      [](const AdamWArgs& a) { adamw_step(a); }, [](const AdamWArgs& a) { return adamw_check(a); },
      [](const AdamWArgs& a) { return adamw_kernel_name(a); }, "One AdamW step in place (ops/optimizer.hpp).",
      arg("param"), arg("grad"), arg("m"), arg("v"), py::kw_only(), arg("lr"), arg("step"),
      arg("param_copy") = py::none(), arg("beta1") = 0.9f, arg("beta2") = 0.999f, arg("eps") = 1e-8f,
      arg("weight_decay") = 0.0f, arg("grad_scale") = 1.0f);
  def_op(
      m, "sgd_step",
      [](Borrowed& k, Obj param, Obj grad, float lr, Obj buf, Obj param_copy, float momentum, float weight_decay,
         float grad_scale) {
        const char* f = "ampkit.sgd_step";
        SgdArgs a;
        a.param = k.view(param, f, "param", true);
        a.grad = k.view(grad, f, "grad");
        a.momentum_buffer = k.view(buf, f, "momentum_buffer", true);
        a.param_copy = k.view(param_copy, f, "param_copy", true);
        a.lr = lr, a.momentum = momentum, a.weight_decay = weight_decay, a.grad_scale = grad_scale;
        return a;
      },
      [](const SgdArgs& a) { sgd_step(a); }, [](const SgdArgs& a) { return sgd_check(a); },
      [](const SgdArgs& a) { return sgd_kernel_name(a); }, "One SGD step in place (ops/optimizer.hpp).", arg("param"),
      arg("grad"), py::kw_only(), arg("lr"), arg("momentum_buffer") = py::none(), arg("param_copy") = py::none(),
      arg("momentum") = 0.0f, arg("weight_decay") = 0.0f, arg("grad_scale") = 1.0f);
  m.def(
      "global_grad_norm",
      [](const py::sequence& grads) {
        Borrowed keep;
        const auto views = views_of(keep, grads, "ampkit.global_grad_norm", "grads");
        py::gil_scoped_release nogil;
        return global_grad_norm(views);
      },
      arg("grads"), "sqrt of the sum of squares of every element (fp64, fixed order).");
  m.def(
      "all_finite",
      [](const py::sequence& views) {
        Borrowed keep;
        const auto v = views_of(keep, views, "ampkit.all_finite", "views");
        py::gil_scoped_release nogil;
        return all_finite(v);
      },
      arg("views"), "True when every element of every tensor is finite.");

  // The fp16 policy.
  m.def("set_fp16_device_model",
        [](const std::string& model) { set_fp16_device_model(parse_fp16_device_model(model, "device_model")); });
  m.def("clear_fp16_device_model", &clear_fp16_device_model);
  m.def("fp16_device_model", [] { return std::string(fp16_device_model_name(fp16_device_model())); });
  m.def("set_gemm_fp16_alt_impl",
        [](const std::string& c) { set_gemm_fp16_alt_impl(parse_alt_impl_choice(c, "gemm_alt_impl")); });
  m.def("clear_gemm_fp16_alt_impl", &clear_gemm_fp16_alt_impl);
  m.def("gemm_fp16_alt_impl", [] { return std::string(alt_impl_choice_name(gemm_fp16_alt_impl())); });
  m.def("set_conv_fp16_alt_impl",
        [](const std::string& c) { set_conv_fp16_alt_impl(parse_alt_impl_choice(c, "conv_alt_impl")); });
  m.def("clear_conv_fp16_alt_impl", &clear_conv_fp16_alt_impl);
  m.def("conv_fp16_alt_impl", [] { return std::string(alt_impl_choice_name(conv_fp16_alt_impl())); });
  m.def(
      "gemm_fp16_mode", [] { return std::string(fp16_mode_name(gemm_fp16_mode())); },
      "The mode an fp16 GEMM issued now on this thread uses.");
  m.def("in_backward_pass", &in_backward_pass);
  m.def("fp16_counters", [] { return counters_dict(fp16_counters()); });
  m.def("reset_fp16_counters", &reset_fp16_counters);
  py::class_<BackwardPass>(m, "BackwardPassGuard",
                           "with ampkit.backward_pass(): marks this thread as running backward work "
                           "(BackwardPassGuard), restored on exit, exceptions included.")
      .def(py::init([](bool backward) { return BackwardPass(backward); }), arg("backward") = true)
      .def("__enter__",
           [](BackwardPass& g) -> BackwardPass& {
             g.enter();
             return g;
           })
      .def("__exit__", [](BackwardPass& g, py::args) {
        g.exit();
        return false;
      });

  // Kernels and devices.
  m.def("set_reference_kernels", &set_reference_kernels, arg("on"));
  m.def("reference_kernels", &reference_kernels);
  m.def("kernel_lists", [] {
    py::list out;
    for (const KernelList& l : kernel_lists()) {
      py::list kernels;
      for (const KernelStatus& s : l.kernels) kernels.append(py::make_tuple(s.name, s.declined));
      out.append(py::make_tuple(l.op, device_name(l.device), kernels));
    }
    return out;
  });
  m.def("cuda_built", &cuda_built);
  m.def("cuda_device_count", &cuda_device_count);
  m.def(
      "set_cuda_stream",
      [](std::uintptr_t stream, int device) { set_cuda_stream(reinterpret_cast<void*>(stream), device); },
      arg("stream"), arg("device_index") = 0, "ampkit's ops on that GPU enqueue on this cudaStream_t (an int).");
  m.def("cuda_synchronize", &cuda_synchronize, arg("device_index") = 0);
  m.def("release_gemm_workspace", &release_gemm_workspace);

  // For bench/python_overhead.py: the C++ call alone, timed in a loop over views built once, so
  // the Python figure (binding + DLPack import per call) has its baseline on the same tensors.
  m.def(
      "_time_layer_norm_forward_cpp",
      [](Obj x, Obj y, Obj gamma, Obj beta, Obj mean, Obj rstd, int iterations) {
        Borrowed keep;
        const char* f = "ampkit._time_layer_norm_forward_cpp";
        NormForwardArgs a;
        a.x = keep.view(x, f, "x");
        a.y = keep.view(y, f, "y", true);
        a.gamma = keep.view(gamma, f, "gamma");
        a.beta = keep.view(beta, f, "beta");
        a.mean = keep.view(mean, f, "mean", true);
        a.rstd = keep.view(rstd, f, "rstd", true);
        layer_norm_forward(a);  // warm-up
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) layer_norm_forward(a);
        const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
        return elapsed.count() / iterations;
      },
      arg("x"), arg("y"), arg("gamma"), arg("beta"), arg("mean"), arg("rstd"), arg("iterations"),
      "Nanoseconds per layer_norm_forward call from C++ (no binding), on the given tensors.");
  m.def("gemm_workspace_bytes", &gemm_workspace_bytes);
}

}  // namespace ampkit::python

PYBIND11_MODULE(_ampkit, m) { ampkit::python::init_module(m); }
