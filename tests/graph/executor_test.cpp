// Tests of the memory planner and the executor (graph layer): no two values whose lifetimes
// overlap share bytes, offsets are 64-byte aligned, reuse happens; the fp16 mode each GEMM node
// used follows the pass (MI200 model: forward flush, backward alt; the environment/API table);
// results are bitwise the same for 1 and 2 threads; the heap does not grow across steady-state
// runs; binding and unbound-value errors name the value and the node; prepared nodes select no
// kernel after their first run, and select again (giving a fresh executor's bits) when the ISA cap,
// set_reference_kernels or the fp16 mode changes between runs.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cstring>
#include <random>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/graph/verify.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/train/models.hpp"
#include "graph/graph_test_support.hpp"
#include "numerics/policy_test_support.hpp"
#include "ops/kernel_registry.hpp"
#include "support/test_support.hpp"

namespace ampkit::graph {
namespace {

using testing::TrainGraph;

struct Mlp {
  Graph g;
  ValueId loss = kNoValue;
  std::vector<ValueId> params;
};

// x [rows, 12] -> layers x (Linear(16) + GELU) -> Linear(5) -> CE, in `compute`.
Mlp mlp(DType compute, int layers, std::int64_t rows = 9) {
  Mlp m;
  Builder b(m.g, {compute});
  ValueId h = b.input("x", compute, {rows, 12});
  const ValueId targets = b.input("targets", DType::i32, {rows});
  std::int64_t width = 12;
  for (int l = 0; l < layers; ++l) {
    const std::string p = "fc" + std::to_string(l);
    // One statement per parameter: their value ids must not depend on the compiler's order of
    // evaluating function arguments (clang and GCC differ).
    const ValueId w = b.parameter(p + ".w", {16, width});
    const ValueId bias = b.parameter(p + ".b", {16});
    h = b.gelu(b.linear(h, w, bias, p), GeluVariant::tanh, p + ".act");
    width = 16;
  }
  m.loss = b.softmax_cross_entropy(b.linear(h, b.parameter("out.w", {5, width}), kNoValue, "out"), targets, "ce");
  for (const Value& v : m.g.values)
    if (v.kind == ValueKind::parameter) m.params.push_back(v.id);
  return m;
}

TEST(GraphExecutor, PlanNeverOverlapsLiveValuesAndReusesMemory) {
  for (bool fuse : {false, true}) {
    Mlp m = mlp(DType::bf16, 4);
    TrainGraph t(m.g, m.loss, {}, {.fuse = fuse});
    const Graph& g = t.graph();
    const MemoryPlan& p = t.executor().plan();
    std::vector<ValueId> placed;
    for (const Value& v : g.values)
      if (p.offset[static_cast<std::size_t>(v.id)] >= 0) placed.push_back(v.id);
    ASSERT_GT(placed.size(), 10u);
    for (ValueId a : placed) {
      const auto ua = static_cast<std::size_t>(a);
      EXPECT_EQ(p.offset[ua] % kArenaAlignment, 0);
      EXPECT_LE(p.offset[ua] + g.value(a).bytes(), p.arena_bytes);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.executor().view(a).data) % kArenaAlignment, 0u);
      for (ValueId b : placed) {
        const auto ub = static_cast<std::size_t>(b);
        if (a >= b || p.first[ua] > p.last[ub] || p.first[ub] > p.last[ua]) continue;
        const bool disjoint =
            p.offset[ua] + g.value(a).bytes() <= p.offset[ub] || p.offset[ub] + g.value(b).bytes() <= p.offset[ua];
        EXPECT_TRUE(disjoint) << g.value(a).name << " and " << g.value(b).name << " are live together";
      }
    }
    for (ValueId v : g.outputs) EXPECT_EQ(p.last[static_cast<std::size_t>(v)], static_cast<int>(g.nodes.size()));
    EXPECT_LT(p.arena_bytes, p.unshared_bytes * 3 / 4) << "no reuse";
  }
}

// The DESIGN.md section 5 table through the graph: which mode every GEMM node resolved.
TEST(GraphExecutor, Fp16GemmNodesTakeThePolicyModeOfTheirPass) {
  ampkit::testing::PolicyEnvScope env;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  Mlp m = mlp(DType::f16, 2);
  TrainGraph t(m.g, m.loss, {}, {});
  t.fill(5, 0.5, 5);
  struct Row {
    const char* env;  // ROCBLAS_INTERNAL_FP16_ALT_IMPL
    Fp16Mode forward, backward;
  };
  for (const Row& row : {Row{nullptr, Fp16Mode::flush, Fp16Mode::alt}, Row{"1", Fp16Mode::alt, Fp16Mode::alt},
                         Row{"0", Fp16Mode::flush, Fp16Mode::flush}}) {
    ampkit::testing::PolicyEnvScope::set(ampkit::testing::kGemmEnv, row.env);
    SCOPED_TRACE(row.env ? row.env : "unset");
    t.run();
    int forward = 0, backward = 0;
    for (std::size_t i = 0; i < t.graph().nodes.size(); ++i) {
      const Node& n = t.graph().nodes[i];
      const NodeRecord& r = t.executor().records()[i];
      EXPECT_EQ(r.backward, n.attrs.backward);
      const bool gemm = n.op == OpKind::Linear || n.op == OpKind::LinearBackward;
      EXPECT_EQ(r.fp16_gemm, gemm) << describe_node(t.graph(), static_cast<int>(i));
      if (!gemm) continue;
      EXPECT_EQ(r.fp16_mode, n.attrs.backward ? row.backward : row.forward)
          << describe_node(t.graph(), static_cast<int>(i)) << ": " << fp16_mode_name(r.fp16_mode);
      (n.attrs.backward ? backward : forward) += 1;
    }
    EXPECT_EQ(forward, 3);
    EXPECT_EQ(backward, 3);
  }
  // An explicit API choice wins over the environment; the guard is not left set.
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  t.run();
  for (const NodeRecord& r : t.executor().records()) {
    if (r.fp16_gemm) {
      EXPECT_EQ(r.fp16_mode, Fp16Mode::flush);
    }
  }
  EXPECT_FALSE(in_backward_pass());
}

// Why the tag matters: activations in the fp16 subnormal range (here 2^-20) are flushed by the
// MI200 model's original mode. Tagged backward GEMMs take alt (bf16 operands: no underflow), so
// the weight gradient survives; forcing the original mode in both passes loses it.
TEST(GraphExecutor, Mi200BackwardAltKeepsWeightGradientsThatFlushLoses) {
  ampkit::testing::PolicyEnvScope env;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  Graph g;
  Builder b(g, {DType::f16});
  const ValueId x = b.input("x", DType::f16, {4, 8});
  const ValueId targets = b.input("targets", DType::i32, {4});
  const ValueId w = b.parameter("w", {3, 8});
  const ValueId loss = b.softmax_cross_entropy(b.linear(x, w, kNoValue, "fc"), targets, "ce");
  TrainGraph t(g, loss, {}, {});
  t.fill(9, 1.0, 3);
  for (std::int64_t i = 0; i < 32; ++i) t.set(x, i, (i % 3 == 0 ? -1.0 : 1.0) * 0x1p-20);
  ASSERT_EQ(t.get(x, 1), 0x1p-20);  // stored exactly: an fp16 subnormal
  auto largest_dw = [&] {
    t.run();
    double m = 0.0;
    for (double v : t.gradient(w)) m = std::max(m, std::fabs(v));
    return m;
  };
  const Fp16Counters before = fp16_counters();
  const double per_pass = largest_dw();
  EXPECT_GT(per_pass, 0x1p-24);
  // Each GEMM node records the subnormal x it read: the forward flushed all 32, the backward's
  // dw GEMM (alt) read them too; the process-wide counters grew by the same amounts.
  std::int64_t inputs = 0, outputs = 0, calls = 0;
  for (std::size_t i = 0; i < t.graph().nodes.size(); ++i) {
    const Node& n = t.graph().nodes[i];
    const NodeRecord& r = t.executor().records()[i];
    if (n.op == OpKind::Linear) {
      EXPECT_EQ(r.fp16_mode, Fp16Mode::flush);
      EXPECT_EQ(r.fp16_subnormal_inputs, 32);
    }
    if (n.op == OpKind::LinearBackward) {
      EXPECT_EQ(r.fp16_mode, Fp16Mode::alt);
      EXPECT_EQ(r.fp16_subnormal_inputs, 32);
    }
    if (n.op != OpKind::Linear && n.op != OpKind::LinearBackward) {
      EXPECT_EQ(r.gemm_calls, 0);
    }
    inputs += r.fp16_subnormal_inputs;
    outputs += r.fp16_subnormal_outputs;
    calls += r.gemm_calls;
  }
  const Fp16Counters after = fp16_counters();
  EXPECT_EQ(calls, after.gemm_calls() - before.gemm_calls());
  EXPECT_EQ(inputs, (after.flush.subnormal_inputs + after.alt.subnormal_inputs) -
                        (before.flush.subnormal_inputs + before.alt.subnormal_inputs));
  EXPECT_EQ(outputs, (after.flush.subnormal_outputs + after.alt.subnormal_outputs) -
                         (before.flush.subnormal_outputs + before.alt.subnormal_outputs));
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  EXPECT_EQ(largest_dw(), 0.0);
}

TEST(GraphExecutor, BitwiseTheSameForOneAndTwoThreads) {
  for (DType compute : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(compute));
    const auto seed = ampkit::testing::fresh_seed();
    std::vector<ampkit::testing::Bytes> results[2];
    for (int threads : {1, 2}) {
      ampkit::testing::ThreadsScope scope(threads);
      Mlp m = mlp(compute, 2, 67);
      TrainGraph t(m.g, m.loss, {}, {});
      t.fill(seed, 0.5, 5);
      t.run();
      for (ValueId v : t.graph().outputs) {
        const TensorView view = t.executor().view(v);
        const auto* p = static_cast<const unsigned char*>(view.data);
        results[threads - 1].emplace_back(p, p + view.bytes());
      }
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

TEST(GraphExecutor, SteadyStateRunsKeepTheArenaAndDoNotGrowTheHeap) {
  Mlp m = mlp(DType::bf16, 2);
  TrainGraph t(m.g, m.loss, {}, {});
  t.fill(7, 0.5, 5);
  // Warm-up: the first run grows kernel scratch; the OpenMP runtime caches a little state over
  // the first few runs (up to ~1 KB seen, then flat). After that the heap in use must not move.
  for (int i = 0; i < 8; ++i) t.run();
  const void* arena = t.executor().view(t.loss()).data;
  const std::size_t before = mallinfo2().uordblks;
  for (int i = 0; i < 50; ++i) t.run();
  EXPECT_EQ(mallinfo2().uordblks, before);
  EXPECT_EQ(t.executor().view(t.loss()).data, arena);
  for (const NodeRecord& r : t.executor().records()) EXPECT_GE(r.seconds, 0.0);
}

// The executor binds each node's views once; binding a value again (between runs) must rebind
// them, so the next run reads the new memory.
TEST(GraphExecutor, RebindingAnInputBetweenRunsReadsTheNewMemory) {
  Graph g;
  Builder b(g);
  const ValueId x = b.input("x", DType::f32, {2, 3});
  const ValueId w = b.parameter("w", {2, 3});
  const ValueId y = b.linear(x, w, kNoValue, "fc");
  g.outputs = {y};
  Executor e(g);
  const std::vector<float> wv{1, 2, 3, -1, 0, 2};
  const std::vector<float> x1{1, 1, 1, 2, 0, -1}, x2{0, 1, 0, 3, 1, 1};
  e.bind(w, wv.data());
  auto run_with = [&](const std::vector<float>& xv) {
    e.bind(x, xv.data());
    e.run();
    const float* out = static_cast<const float*>(e.view(y).data);
    return std::vector<float>(out, out + 4);
  };
  EXPECT_EQ(run_with(x1), (std::vector<float>{6, 1, -1, -4}));
  EXPECT_EQ(run_with(x2), (std::vector<float>{2, 0, 8, -1}));
  EXPECT_EQ(run_with(x1), (std::vector<float>{6, 1, -1, -4}));
}

// A one-block GPT in `compute` (every op family the trainer runs), filled from `seed`.
TrainGraph tiny_gpt(DType compute, std::uint64_t seed) {
  train::GptConfig c;
  c.vocab = 11, c.seq_len = 6, c.dim = 8, c.heads = 2, c.layers = 1;
  train::ModelGraph m = train::build_gpt(c, 2, compute);
  TrainGraph t(m.graph, m.loss, {}, {});
  t.fill(seed, 0.5, 6);  // tokens, positions and targets in [0, 6)
  return t;
}

// The loss and every parameter gradient, as doubles (exact for every dtype: bitwise equality).
std::vector<double> results(TrainGraph& t) {
  std::vector<double> out{t.value(t.loss(), 0)};
  for (const Value& v : t.graph().values)
    if (v.kind == ValueKind::parameter)
      for (double g : t.gradient(v.id)) out.push_back(g);
  return out;
}

TEST(GraphExecutor, PreparedNodesSelectNoKernelAfterTheirFirstRun) {
  TrainGraph t = tiny_gpt(DType::bf16, 3);
  t.run();  // the first run prepares every node: validation and one selection per op call
  const std::vector<double> first = results(t);
  const std::uint64_t before = ops::kernel_selections_on_this_thread();
  for (int i = 0; i < 3; ++i) t.run();
  EXPECT_EQ(ops::kernel_selections_on_this_thread(), before);
  EXPECT_EQ(results(t), first);
  // A rebind drops the prepared calls: the next run prepares (and selects) again.
  ValueId tokens = kNoValue;
  for (const Value& v : t.graph().values)
    if (v.kind == ValueKind::input && v.dtype == DType::i32 && tokens == kNoValue) tokens = v.id;
  t.executor().bind(tokens, t.buffer(tokens).data());
  t.run();
  EXPECT_GT(ops::kernel_selections_on_this_thread(), before);
  EXPECT_EQ(results(t), first);
}

// A prepared node keys its entry on the selection state: after set_isa_cap or
// set_reference_kernels, its run gives the bits of an executor built under that state.
TEST(GraphExecutor, PreparedNodesFollowTheIsaCapAndTheReferenceKernels) {
  TrainGraph prepared = tiny_gpt(DType::bf16, 9);
  prepared.run();
  for (Isa isa : ampkit::testing::available_isas()) {
    SCOPED_TRACE(isa_name(isa));
    ampkit::testing::IsaScope scope(isa);
    prepared.run();
    TrainGraph fresh = tiny_gpt(DType::bf16, 9);
    fresh.run();
    EXPECT_EQ(results(prepared), results(fresh));
  }
  set_reference_kernels(true);
  prepared.run();
  const std::vector<double> reference = results(prepared);
  TrainGraph fresh = tiny_gpt(DType::bf16, 9);
  fresh.run();
  set_reference_kernels(false);
  EXPECT_EQ(reference, results(fresh));
  prepared.run();
  TrainGraph best = tiny_gpt(DType::bf16, 9);
  best.run();
  EXPECT_EQ(results(prepared), results(best));
}

// An f16 Linear node is prepared with its first run's fp16 mode; when the policy gives another
// mode, the node prepares again and computes in it (the bits of a fresh executor in that mode).
TEST(GraphExecutor, PreparedGemmNodesFollowAChangedFp16Mode) {
  ampkit::testing::PolicyEnvScope env;
  TrainGraph prepared = tiny_gpt(DType::f16, 4);
  for (AltImplChoice choice :
       {AltImplChoice::original, AltImplChoice::alternate, AltImplChoice::per_pass, AltImplChoice::original}) {
    set_fp16_device_model(Fp16DeviceModel::mi200);
    set_gemm_fp16_alt_impl(choice);
    prepared.run();
    TrainGraph fresh = tiny_gpt(DType::f16, 4);
    fresh.run();
    EXPECT_EQ(results(prepared), results(fresh));
  }
}

TEST(GraphExecutor, BindAndRunErrorsNameTheValueAndTheNode) {
  Mlp m = mlp(DType::f32, 1);
  const GradientMap grads = build_backward(m.g, m.loss);
  run_passes(m.g);
  Executor e(m.g);
  const ValueId produced = m.g.nodes[0].outputs[0];
  try {
    e.bind(produced, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("is produced by a node"), std::string::npos) << err.what();
  }
  std::vector<float> x(9 * 12, 0.5f);
  e.bind(0, x.data());
  try {
    e.run();
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    ValueId w = kNoValue;
    for (const Value& v : m.g.values)
      if (v.name == "fc0.w") w = v.id;
    const std::string want = "node 0 (Linear 'fc0') reads %" + std::to_string(w) + " 'fc0.w', which is not bound";
    EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
  }
  try {
    e.run(3, 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("node range [3, 1)"), std::string::npos) << err.what();
  }
  // A kernel's rejection is reported with the node: a target out of range.
  Mlp m2 = mlp(DType::f32, 1);
  TrainGraph t(m2.g, m2.loss, {}, {});
  t.fill(1, 0.5, 5);
  const ValueId targets = 1;
  const std::int32_t bad = 99;
  std::memcpy(t.buffer(targets).data(), &bad, 4);
  try {
    t.run();
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("(SoftmaxCrossEntropy 'ce')"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("99"), std::string::npos) << err.what();
  }
  (void)grads;
}

}  // namespace
}  // namespace ampkit::graph
