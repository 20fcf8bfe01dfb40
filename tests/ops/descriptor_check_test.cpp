// The memory-free descriptor checks (issue 21, item 2): *_descriptor_check over views with null
// data accepts every valid call (stage 1 needs no memory), and on a call whose shapes, dtypes or
// attributes are wrong it says exactly what *_check and the call itself say; an error of memory
// only (overlap, null data) is stage 2: the descriptor check passes it, the call rejects it.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/gemm_views.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/ops/optimizer.hpp"

namespace ampkit {
namespace {

// Makes the views of one case: each over its own zeroed memory, or (descriptors) with null data.
class Views {
 public:
  explicit Views(bool with_memory) : with_memory_(with_memory) {}
  TensorView operator()(DType t, std::initializer_list<std::int64_t> shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    void* data = nullptr;
    if (with_memory_) data = pool_.emplace_back(static_cast<std::size_t>(n > 0 ? n : 1), 0.0).data();
    return TensorView(data, t, shape);
  }

 private:
  bool with_memory_;
  std::deque<std::vector<double>> pool_;
};

// One op case: its descriptor check, its check and its call, over views made by `make`.
struct Case {
  const char* name;
  std::function<std::string(Views&)> descriptor_check, check;
  std::function<void(Views&)> call;
};

std::string call_message(const Case& c, Views& v) {
  try {
    c.call(v);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Stage 1 on descriptors agrees with the check and the call on memory.
void expect_agree(const Case& c, bool valid) {
  Views descriptors(false), memory(true), memory2(true);
  const std::string stage1 = c.descriptor_check(descriptors);
  EXPECT_EQ(stage1.empty(), valid) << c.name << ": " << stage1;
  EXPECT_EQ(stage1, c.check(memory)) << c.name;
  EXPECT_EQ(stage1, call_message(c, memory2)) << c.name;
}

constexpr DType f32 = DType::f32;

Case gelu_case(std::int64_t y_cols) {
  return {"gelu_forward",
          [=](Views& v) {
            return gelu_forward_descriptor_check(v(f32, {3, 4}), v(f32, {3, y_cols}), GeluVariant::erf);
          },
          [=](Views& v) {
            return gelu_forward_check(v(f32, {3, 4}), v(f32, {3, y_cols}), GeluVariant::erf);
          },
          [=](Views& v) {
            gelu_forward(v(f32, {3, 4}), v(f32, {3, y_cols}), GeluVariant::erf);
          }};
}

Case add_case(std::int64_t b_cols) {
  return {"add",
          [=](Views& v) {
            return add_descriptor_check(v(f32, {3, 4}), v(f32, {3, b_cols}), v(f32, {3, 4}));
          },
          [=](Views& v) {
            return add_check(v(f32, {3, 4}), v(f32, {3, b_cols}), v(f32, {3, 4}));
          },
          [=](Views& v) {
            add(v(f32, {3, 4}), v(f32, {3, b_cols}), v(f32, {3, 4}));
          }};
}

Case convert_case(std::int64_t dst_n) {
  return {"convert", [=](Views& v) { return convert_descriptor_check(v(f32, {6}), v(DType::bf16, {dst_n})); },
          [=](Views& v) { return convert_check(v(f32, {6}), v(DType::bf16, {dst_n})); },
          [=](Views& v) { convert(v(f32, {6}), v(DType::bf16, {dst_n})); }};
}

Case norm_case(std::int64_t gamma_n, float eps) {
  const auto args = [=](Views& v) {
    NormForwardArgs a;
    a.x = v(f32, {2, 4}), a.gamma = v(f32, {gamma_n}), a.beta = v(f32, {4}), a.y = v(f32, {2, 4});
    a.mean = v(f32, {2}), a.rstd = v(f32, {2}), a.eps = eps;
    return a;
  };
  return {"layer_norm_forward", [=](Views& v) { return norm_descriptor_check(NormKind::layer, args(v)); },
          [=](Views& v) { return norm_check(NormKind::layer, args(v)); },
          [=](Views& v) { layer_norm_forward(args(v)); }};
}

Case embedding_case(std::int64_t out_cols) {
  return {"embedding_forward",
          [=](Views& v) {
            return embedding_forward_descriptor_check(v(DType::i32, {3}), v(f32, {5, 4}), v(f32, {3, out_cols}));
          },
          [=](Views& v) {
            return embedding_forward_check(v(DType::i32, {3}), v(f32, {5, 4}), v(f32, {3, out_cols}));
          },
          [=](Views& v) {
            embedding_forward(v(DType::i32, {3}), v(f32, {5, 4}), v(f32, {3, out_cols}));
          }};
}

Case attention_case(int heads) {
  const auto args = [=](Views& v) {
    AttentionForwardArgs a;
    a.q = v(f32, {2, 3, 8}), a.k = v(f32, {2, 3, 8}), a.v = v(f32, {2, 3, 8}), a.out = v(f32, {2, 3, 8});
    a.lse = v(f32, {2, 2, 3}), a.heads = heads;
    return a;
  };
  return {"attention_forward", [=](Views& v) { return attention_descriptor_check(args(v)); },
          [=](Views& v) { return attention_check(args(v)); }, [=](Views& v) { attention_forward(args(v)); }};
}

Case adamw_case(std::int64_t step) {
  const auto args = [=](Views& v) {
    AdamWArgs a;
    a.param = v(f32, {6}), a.grad = v(f32, {6}), a.m = v(f32, {6}), a.v = v(f32, {6});
    a.lr = 1e-3f, a.step = step;
    return a;
  };
  return {"adamw_step", [=](Views& v) { return adamw_descriptor_check(args(v)); },
          [=](Views& v) { return adamw_check(args(v)); }, [=](Views& v) { adamw_step(args(v)); }};
}

Case gemm_case(std::int64_t b_rows, Epilogue epilogue) {
  const auto args = [=](Views& v) {
    GemmViewArgs a;
    a.a = v(f32, {2, 3}), a.b = v(f32, {b_rows, 4}), a.d = v(f32, {2, 4});
    a.epilogue = epilogue;
    if (epilogue == Epilogue::BIAS) a.bias = v(f32, {4});
    return a;
  };
  return {"gemm (views)", [=](Views& v) { return gemm_descriptor_check(args(v)); },
          [=](Views& v) { return gemm_check(args(v)); }, [=](Views& v) { gemm(args(v)); }};
}

Case linear_case(std::int64_t w_cols) {
  const auto args = [=](Views& v) {
    LinearForwardArgs a;
    a.x = v(f32, {2, 3}), a.w = v(f32, {4, w_cols}), a.bias = v(f32, {4}), a.y = v(f32, {2, 4});
    return a;
  };
  return {"linear_forward", [=](Views& v) { return linear_descriptor_check(args(v)); },
          [=](Views& v) { return linear_check(args(v)); }, [=](Views& v) { linear_forward(args(v)); }};
}

TEST(DescriptorCheck, ValidCallsNeedNoMemory) {
  for (const Case& c : {gelu_case(4), add_case(4), convert_case(6), norm_case(4, 1e-5f), embedding_case(4),
                        attention_case(2), adamw_case(1), gemm_case(3, Epilogue::BIAS), linear_case(3)})
    expect_agree(c, true);
}

TEST(DescriptorCheck, BadDescriptorsFailLikeTheCall) {
  for (const Case& c : {gelu_case(3), add_case(5), convert_case(5), norm_case(5, 1e-5f), norm_case(4, -1.0f),
                        embedding_case(5), attention_case(3), adamw_case(0), gemm_case(5, Epilogue::DEFAULT),
                        gemm_case(3, Epilogue::GELU_AUX), linear_case(5)})
    expect_agree(c, false);
}

TEST(DescriptorCheck, MemoryRulesAreTheSecondStage) {
  std::vector<float> x(12, 0.5f), y(12);
  const TensorView vx(x.data(), f32, {3, 4}), vy(y.data(), f32, {3, 4}), null_y(nullptr, f32, {3, 4});
  // dx on x: an overlap, which only memory shows.
  EXPECT_EQ(gelu_backward_descriptor_check(vx, vy, vx, GeluVariant::tanh), "");
  EXPECT_NE(gelu_backward_check(vx, vy, vx, GeluVariant::tanh), "");
  // Null data with elements: the call needs memory, the descriptor does not.
  EXPECT_EQ(add_descriptor_check(vx, vx, null_y), "");
  EXPECT_NE(add_check(vx, vx, null_y), "");
  EXPECT_THROW(add(vx, vx, null_y), Error);
  GemmViewArgs g;
  g.a = TensorView(x.data(), f32, {3, 4}), g.b = TensorView(x.data(), f32, {4, 3}),
  g.d = TensorView(x.data(), f32, {3, 3});
  EXPECT_EQ(gemm_descriptor_check(g), "");  // d overlaps a and b
  EXPECT_NE(gemm_check(g), "");
}

}  // namespace
}  // namespace ampkit
