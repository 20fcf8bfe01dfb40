// The graph builder (graph layer, public): appends forward nodes to a Graph and returns value
// ids, inferring every output's shape and dtype and checking each node as it is added (errors
// name the node). Autocast: with a bf16/f16 compute dtype, fp32 master parameters feed GEMMs
// through Cast nodes (one per parameter, made on first use), activations are computed in the
// compute dtype, norm gains/biases and GEMM biases stay f32 (the kernels take them mixed), the
// loss is f32. Used by graph/modules.hpp, the trainer, tests and users.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct BuilderOptions {
  /// Dtype of the activations and of the GEMM operands: f32, bf16 or f16.
  DType compute = DType::f32;
};

class Builder {
 public:
  /// Throws ampkit::Error when options.compute is not f32, bf16 or f16.
  explicit Builder(Graph& g, BuilderOptions options = {});

  /// A graph input fed each run (ids, targets: i32; features: any float dtype).
  ValueId input(const std::string& name, DType dtype, std::vector<std::int64_t> shape);
  /// A trainable fp32 master parameter.
  ValueId parameter(const std::string& name, std::vector<std::int64_t> shape);

  /// y[ids..., :] = table[ids, :] in the compute dtype. ids i32, table [V, D].
  ValueId embedding(ValueId ids, ValueId table, const std::string& name);
  /// y = x wᵀ + b in the compute dtype (b may be kNoValue). With `gelu`, a fused
  /// Linear(gelu) whose aux output (the pre-activation) is returned through `aux` when given;
  /// modules emit Linear + Gelu and let the fusion pass fuse them.
  ValueId linear(ValueId x, ValueId w, ValueId b, const std::string& name, bool gelu = false,
                 GeluVariant variant = GeluVariant::tanh, ValueId* aux = nullptr);
  /// LayerNorm over the last dim; gamma/beta may be kNoValue. y has x's dtype.
  ValueId layer_norm(ValueId x, ValueId gamma, ValueId beta, float eps, const std::string& name);
  /// RMSNorm over the last dim; gamma may be kNoValue.
  ValueId rms_norm(ValueId x, ValueId gamma, float eps, const std::string& name);
  ValueId gelu(ValueId x, GeluVariant variant, const std::string& name);
  /// y = a + b (same shapes), in the compute dtype.
  ValueId add(ValueId a, ValueId b, const std::string& name);
  /// Causal multi-head attention of a packed qkv [B, T, 3C]; returns out [B, T, C].
  ValueId attention(ValueId qkv, std::int32_t heads, const std::string& name);
  /// Mean softmax cross-entropy of logits [..., classes] against targets i32 [...]; f32 [].
  ValueId softmax_cross_entropy(ValueId logits, ValueId targets, const std::string& name);
  /// y = pool2d(x) (max or average, ampkit/ops/pool2d.hpp) of x [N, C, H, W]: y [N, C, OH, OW].
  ValueId pool2d(ValueId x, const Pool2dParams& params, const std::string& name);
  /// y = conv2d(x, w) + b of x [N, C, H, W] and an f32 parameter w [K, C/G, R, S] (read through
  /// its compute copy), b? [K] f32: y [N, K, P, Q]. NCHW; the fp16 mode is the convolution policy's.
  ValueId conv2d(ValueId x, ValueId w, ValueId b, const Conv2dParams& params, const std::string& name);
  /// y = x converted to `dtype`.
  ValueId cast(ValueId x, DType dtype, const std::string& name);

  /// The compute copy of an f32 parameter (a Cast made on first use), or the value itself when
  /// no cast is needed.
  ValueId compute_copy(ValueId v);

  Graph& graph() { return g_; }
  DType compute() const { return options_.compute; }

 private:
  // Appends the node and checks it; returns its index.
  int append(OpKind op, const std::string& name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
             Attributes attrs = {});
  ValueId intermediate(const std::string& name, DType dtype, std::vector<std::int64_t> shape);
  const Value& value(ValueId v) const;

  Graph& g_;
  BuilderOptions options_;
  std::map<ValueId, ValueId> casts_;  // parameter -> its compute copy
};

}  // namespace ampkit::graph
