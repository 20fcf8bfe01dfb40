// The queries every op answers (issue 7): for a valid call, *_check is empty and *_kernel_name is
// the entry of the op's kernel list that runs (the first one this machine can run: these lists
// decline no problem); for an invalid call, *_check is exactly the message the call and the
// kernel-name query throw. Over gelu, the elementwise ops, softmax cross-entropy, embedding,
// attention and the optimizer steps.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"

namespace ampkit {
namespace {

struct Query {
  std::function<std::string()> check;
  std::function<const char*()> kernel_name;
  std::function<void()> call;
};

// The first entry of the CPU list `op` (kernel_lists()) that this machine can run now.
std::string first_runnable(const std::string& op) {
  for (const KernelList& list : kernel_lists())
    if (list.op == op && list.device == Device::cpu)
      for (const KernelStatus& k : list.kernels)
        if (k.declined.empty()) return k.name;
  return "(no list named " + op + ")";
}

void expect_valid(const std::string& list, const Query& q, const char* what) {
  EXPECT_EQ(q.check(), "") << what;
  EXPECT_EQ(std::string(q.kernel_name()), first_runnable(list)) << what;
  EXPECT_NO_THROW(q.call()) << what;
}

void expect_invalid(const Query& q, const char* what) {
  const std::string message = q.check();
  ASSERT_FALSE(message.empty()) << what;
  for (const auto& run : {std::function<void()>([&] { q.kernel_name(); }), q.call}) {
    try {
      run();
      ADD_FAILURE() << what << ": accepted, but its check said: " << message;
    } catch (const Error& e) {
      EXPECT_EQ(message, e.what()) << what;
    }
  }
}

TEST(OpQueries, Gelu) {
  std::vector<float> x(12, 0.5f), y(12), dx(12);
  const TensorView vx(x.data(), DType::f32, {3, 4}), vy(y.data(), DType::f32, {3, 4}),
      vdx(dx.data(), DType::f32, {3, 4}), short_y(y.data(), DType::f32, {3, 3});
  const auto fwd = [](TensorView a, TensorView b) {
    return Query{[=] { return gelu_forward_check(a, b, GeluVariant::tanh); },
                 [=] { return gelu_forward_kernel_name(a, b, GeluVariant::tanh); },
                 [=] { gelu_forward(a, b, GeluVariant::tanh); }};
  };
  const auto bwd = [](TensorView a, TensorView dy, TensorView d) {
    return Query{[=] { return gelu_backward_check(a, dy, d, GeluVariant::erf); },
                 [=] { return gelu_backward_kernel_name(a, dy, d, GeluVariant::erf); },
                 [=] { gelu_backward(a, dy, d, GeluVariant::erf); }};
  };
  expect_valid("gelu", fwd(vx, vy), "gelu_forward");
  expect_valid("gelu", bwd(vx, vy, vdx), "gelu_backward");
  expect_invalid(fwd(vx, short_y), "gelu_forward, shapes differ");
  expect_invalid(bwd(vx, vy, vx), "gelu_backward, dx is x");
}

TEST(OpQueries, Elementwise) {
  std::vector<float> a(12, 1.0f), b(12, 2.0f), out(12), bias(4, 0.5f), sums(4);
  const TensorView va(a.data(), DType::f32, {3, 4}), vb(b.data(), DType::f32, {3, 4}),
      vout(out.data(), DType::f32, {3, 4}), vbias(bias.data(), DType::f32, {4}), vsums(sums.data(), DType::f32, {4}),
      wrong(out.data(), DType::f32, {4, 3});
  const char* ew = "elementwise (add, add_accumulate, add_row_vector, scale)";
  const auto add_q = [](TensorView x, TensorView y, TensorView o) {
    return Query{[=] { return add_check(x, y, o); }, [=] { return add_kernel_name(x, y, o); }, [=] { add(x, y, o); }};
  };
  const auto acc_q = [](TensorView x, TensorView o) {
    return Query{[=] { return add_accumulate_check(x, o); }, [=] { return add_accumulate_kernel_name(x, o); },
                 [=] { add_accumulate(x, o); }};
  };
  const auto row_q = [](TensorView x, TensorView bv, TensorView o) {
    return Query{[=] { return add_row_vector_check(x, bv, o); }, [=] { return add_row_vector_kernel_name(x, bv, o); },
                 [=] { add_row_vector(x, bv, o); }};
  };
  const auto sum_q = [](TensorView x, TensorView o) {
    return Query{[=] { return sum_rows_check(x, o, false); }, [=] { return sum_rows_kernel_name(x, o, false); },
                 [=] { sum_rows(x, o, false); }};
  };
  const auto scale_q = [](TensorView x, float alpha, TensorView o) {
    return Query{[=] { return scale_check(x, alpha, o); }, [=] { return scale_kernel_name(x, alpha, o); },
                 [=] { scale(x, alpha, o); }};
  };
  expect_valid(ew, add_q(va, vb, vout), "add");
  expect_valid(ew, acc_q(va, vout), "add_accumulate");
  expect_valid(ew, row_q(va, vbias, vout), "add_row_vector");
  expect_valid("sum_rows", sum_q(va, vsums), "sum_rows");
  expect_valid(ew, scale_q(va, 2.0f, vout), "scale");
  expect_invalid(add_q(va, vb, wrong), "add, out's shape");
  expect_invalid(acc_q(va, wrong), "add_accumulate, acc's shape");
  expect_invalid(row_q(va, vsums, vsums), "add_row_vector, out is a vector");
  expect_invalid(sum_q(va, wrong), "sum_rows, out is a matrix");
  expect_invalid(scale_q(va, 1.0f / 0.0f, vout), "scale, alpha is Inf");
}

TEST(OpQueries, SoftmaxCrossEntropy) {
  std::vector<float> logits(15, 0.25f), dlogits(15), lse(3), loss(1);
  std::vector<std::int32_t> targets = {0, 4, 2}, bad_targets = {0, 5, 2};
  const TensorView vl(logits.data(), DType::f32, {3, 5}), vt(targets.data(), DType::i32, {3}),
      vbad(bad_targets.data(), DType::i32, {3}), vlse(lse.data(), DType::f32, {3}), vloss(loss.data(), DType::f32, {1}),
      vd(dlogits.data(), DType::f32, {3, 5});
  const auto fwd = [](TensorView l, TensorView t, TensorView lo, TensorView ls) {
    return Query{[=] { return softmax_cross_entropy_forward_check(l, t, lo, ls); },
                 [=] { return softmax_cross_entropy_forward_kernel_name(l, t, lo, ls); },
                 [=] { softmax_cross_entropy_forward(l, t, lo, ls); }};
  };
  const auto bwd = [](TensorView l, TensorView t, TensorView ls, TensorView d) {
    return Query{[=] { return softmax_cross_entropy_backward_check(l, t, ls, 1.0f, d); },
                 [=] { return softmax_cross_entropy_backward_kernel_name(l, t, ls, 1.0f, d); },
                 [=] { softmax_cross_entropy_backward(l, t, ls, 1.0f, d); }};
  };
  expect_valid("softmax_cross_entropy_forward", fwd(vl, vt, vloss, vlse), "forward");
  expect_valid("softmax_cross_entropy_backward", bwd(vl, vt, vlse, vd), "backward");
  expect_invalid(fwd(vl, vbad, vloss, vlse), "forward, a target out of range");
  expect_invalid(bwd(vl, vt, vlse, vlse), "backward, dlogits has lse's shape");
}

TEST(OpQueries, Embedding) {
  std::vector<float> table(20, 1.0f), out(12), dtable(20);
  std::vector<std::int32_t> ids = {4, 0, 2}, bad_ids = {4, 5, 2};
  const TensorView vids(ids.data(), DType::i32, {3}), vbad(bad_ids.data(), DType::i32, {3}),
      vtable(table.data(), DType::f32, {5, 4}), vout(out.data(), DType::f32, {3, 4}),
      vdtable(dtable.data(), DType::f32, {5, 4});
  const auto fwd = [](TensorView i, TensorView t, TensorView o) {
    return Query{[=] { return embedding_forward_check(i, t, o); },
                 [=] { return embedding_forward_kernel_name(i, t, o); }, [=] { embedding_forward(i, t, o); }};
  };
  const auto bwd = [](TensorView i, TensorView d, TensorView dt) {
    return Query{[=] { return embedding_backward_check(i, d, dt, false); },
                 [=] { return embedding_backward_kernel_name(i, d, dt, false); },
                 [=] { embedding_backward(i, d, dt, false); }};
  };
  expect_valid("embedding_forward", fwd(vids, vtable, vout), "forward");
  expect_valid("embedding_backward", bwd(vids, vout, vdtable), "backward");
  expect_invalid(fwd(vbad, vtable, vout), "forward, an id out of range");
  expect_invalid(bwd(vids, vout, vout), "backward, dtable has dout's shape");
}

TEST(OpQueries, Attention) {
  constexpr std::int64_t kBatch = 2, kSeq = 3, kWidth = 8;
  std::vector<float> q(kBatch * kSeq * kWidth, 0.5f), out(q.size()), lse(kBatch * 2 * kSeq), dq(q.size());
  const TensorView vq(q.data(), DType::f32, {kBatch, kSeq, kWidth}),
      vout(out.data(), DType::f32, {kBatch, kSeq, kWidth}), vlse(lse.data(), DType::f32, {kBatch, 2, kSeq}),
      vdq(dq.data(), DType::f32, {kBatch, kSeq, kWidth});
  AttentionForwardArgs f;
  f.q = f.k = f.v = vq, f.out = vout, f.lse = vlse, f.heads = 2;
  const auto fwd = [](AttentionForwardArgs a) {
    return Query{[=] { return attention_check(a); }, [=] { return attention_kernel_name(a); },
                 [=] { attention_forward(a); }};
  };
  const auto bwd = [](AttentionBackwardArgs a) {
    return Query{[=] { return attention_check(a); }, [=] { return attention_kernel_name(a); },
                 [=] { attention_backward(a); }};
  };
  expect_valid("attention_forward", fwd(f), "forward");
  AttentionBackwardArgs b;
  b.q = b.k = b.v = vq, b.out = vout, b.lse = vlse, b.dout = vout, b.dq = vdq, b.heads = 2;
  expect_valid("attention_backward", bwd(b), "backward");
  f.heads = 3;  // does not divide the width
  expect_invalid(fwd(f), "forward, heads");
  b.dq = vq;  // an output on an input
  expect_invalid(bwd(b), "backward, dq is q");
}

TEST(OpQueries, Optimizers) {
  std::vector<float> param(6, 1.0f), grad(6, 0.1f), m(6), v(6), buf(6);
  const TensorView vp(param.data(), DType::f32, {6}), vg(grad.data(), DType::f32, {6}), vm(m.data(), DType::f32, {6}),
      vv(v.data(), DType::f32, {6}), vbuf(buf.data(), DType::f32, {6});
  AdamWArgs adam;
  adam.param = vp, adam.grad = vg, adam.m = vm, adam.v = vv, adam.lr = 1e-3f, adam.step = 1;
  const auto adam_q = [](AdamWArgs a) {
    return Query{[=] { return adamw_check(a); }, [=] { return adamw_kernel_name(a); }, [=] { adamw_step(a); }};
  };
  SgdArgs sgd;
  sgd.param = vp, sgd.grad = vg, sgd.momentum_buffer = vbuf, sgd.lr = 0.1f, sgd.momentum = 0.9f;
  const auto sgd_q = [](SgdArgs a) {
    return Query{[=] { return sgd_check(a); }, [=] { return sgd_kernel_name(a); }, [=] { sgd_step(a); }};
  };
  expect_valid("adamw_step", adam_q(adam), "adamw_step");
  expect_valid("sgd_step", sgd_q(sgd), "sgd_step");
  adam.step = 0;
  expect_invalid(adam_q(adam), "adamw_step, step 0");
  sgd.momentum_buffer = TensorView();
  expect_invalid(sgd_q(sgd), "sgd_step, no momentum buffer");
}

}  // namespace
}  // namespace ampkit
