// The executor's binding of each op to the public ops API (graph layer): builds the operand
// TensorViews of a node from the values' memory and calls the kernel front end. GEMM nodes
// resolve their fp16 mode here, on the calling thread, inside the executor's BackwardPassGuard
// for tagged nodes (DESIGN.md section 5). Called by executor.cpp only.
#include "graph/node_kernels.hpp"

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"

namespace ampkit::graph {
namespace {

// Views of one node's operands.
class Operands {
 public:
  Operands(const Graph& g, const Node& n, const std::vector<void*>& data, const ExecutorOptions& options)
      : g_(g), n_(n), data_(data), options_(options) {}

  // Row-major view of input/output slot s (absent view for an absent slot).
  TensorView in(int s) const { return view(n_.inputs[static_cast<std::size_t>(s)]); }
  TensorView out(int s) const { return view(n_.outputs[static_cast<std::size_t>(s)]); }
  // The same memory as [rows, last dim].
  TensorView in_2d(int s) const { return as_2d(n_.inputs[static_cast<std::size_t>(s)]); }
  TensorView out_2d(int s) const { return as_2d(n_.outputs[static_cast<std::size_t>(s)]); }
  // The same memory as one flat [numel] vector.
  TensorView in_flat(int s) const {
    const ValueId v = n_.inputs[static_cast<std::size_t>(s)];
    const Value& val = g_.value(v);
    return on_device(TensorView(data_[static_cast<std::size_t>(v)], val.dtype, {val.numel()}));
  }
  DType in_dtype(int s) const { return g_.value(n_.inputs[static_cast<std::size_t>(s)]).dtype; }
  const void* in_data(int s) const { return data_[static_cast<std::size_t>(n_.inputs[static_cast<std::size_t>(s)])]; }
  // The f32 scalar input s, read on the host (copied back from the GPU: the call waits).
  float in_scalar(int s) const {
    float value = 0.0f;
    if (options_.device == Device::cuda)
      cuda_copy_to_host(&value, in_data(s), sizeof(float), options_.device_index);
    else
      value = *static_cast<const float*>(in_data(s));
    return value;
  }

 private:
  TensorView view(ValueId v) const {
    if (v == kNoValue) return TensorView();
    const Value& val = g_.value(v);
    return on_device(TensorView(data_[static_cast<std::size_t>(v)], val.dtype, val.shape.data(),
                                static_cast<int>(val.shape.size())));
  }
  TensorView as_2d(ValueId v) const {
    if (v == kNoValue) return TensorView();
    const Value& val = g_.value(v);
    const std::int64_t cols = val.shape.empty() ? 1 : val.shape.back();
    const std::int64_t rows = cols == 0 ? 0 : val.numel() / cols;
    return on_device(TensorView(data_[static_cast<std::size_t>(v)], val.dtype, {rows, cols}));
  }
  TensorView on_device(TensorView v) const {
    v.device = options_.device;
    v.device_index = options_.device_index;
    return v;
  }

  const Graph& g_;
  const Node& n_;
  const std::vector<void*>& data_;
  const ExecutorOptions& options_;
};

// Column block `part` (0: q, 1: k, 2: v) of a packed [B, T, 3C] buffer: [B, T, C] with the
// packed row strides.
TensorView qkv_part(const TensorView& packed, int part) {
  TensorView v = packed;
  const std::int64_t c = packed.shape[2] / 3;
  v.shape[2] = c;
  v.data = static_cast<unsigned char*>(packed.data) +
           static_cast<std::int64_t>(part) * c * static_cast<std::int64_t>(dtype_size(packed.dtype));
  return v;
}

// The fp16 mode for a GEMM node whose GEMM operands have the given dtypes.
Fp16Mode resolve_mode(std::initializer_list<DType> operands, NodeRecord& record) {
  record.fp16_gemm = false;
  for (DType t : operands)
    if (t == DType::f16) record.fp16_gemm = true;
  record.fp16_mode = record.fp16_gemm ? gemm_fp16_mode() : Fp16Mode::exact;
  return record.fp16_mode;
}

// The node's GEMMs into its record and the process-wide fp16 counters.
void add_gemm_reports(const LinearReport& report, NodeRecord& record) {
  record.gemm_calls = report.gemm_count;
  for (int i = 0; i < report.gemm_count; ++i) {
    const GemmReport& r = report.gemms[i];
    record.fp16_subnormal_inputs += r.fp16_subnormal_inputs;
    record.fp16_subnormal_outputs += r.fp16_subnormal_outputs;
    add_fp16_gemm_report(r);
  }
}

void linear(const Operands& o, const Attributes& a, NodeRecord& record) {
  LinearForwardArgs args;
  args.x = o.in(0);
  args.w = o.in(1);
  args.bias = o.in(2);
  args.y = o.out(0);
  args.aux = o.out(1);
  args.gelu = a.gelu;
  args.gelu_variant = a.gelu_variant;
  args.fp16_mode = resolve_mode({args.x.dtype, args.w.dtype}, record);
  LinearReport report;
  linear_forward(args, &report);
  add_gemm_reports(report, record);
}

void linear_backward_node(const Operands& o, const Attributes& a, NodeRecord& record) {
  LinearBackwardArgs args;
  args.dy = o.in(0);
  args.x = o.in(1);
  args.w = o.in(2);
  args.below_aux = o.in(3);
  args.dx = o.out(0);
  args.dw = o.out(1);
  args.db = o.out(2);
  args.below_db = o.out(3);
  args.below_gelu = a.below_gelu;
  args.below_gelu_variant = a.gelu_variant;
  args.fp16_mode = resolve_mode({args.dy.dtype, args.x.dtype, args.w.dtype}, record);
  LinearReport report;
  linear_backward(args, &report);
  add_gemm_reports(report, record);
}

void norm_forward(const Operands& o, const Attributes& a, bool layer) {
  NormForwardArgs args;
  args.x = o.in(0);
  args.gamma = o.in(1);
  args.eps = a.eps;
  args.y = o.out(0);
  if (layer) {
    args.beta = o.in(2);
    args.mean = o.out(1);
    args.rstd = o.out(2);
    layer_norm_forward(args);
  } else {
    args.rstd = o.out(1);
    rms_norm_forward(args);
  }
}

void norm_backward(const Operands& o, bool layer) {
  NormBackwardArgs args;
  args.dy = o.in(0);
  args.x = o.in(1);
  args.dx = o.out(0);
  args.dgamma = o.out(1);
  if (layer) {
    args.mean = o.in(2);
    args.rstd = o.in(3);
    args.gamma = o.in(4);
    args.dbeta = o.out(2);
    layer_norm_backward(args);
  } else {
    args.rstd = o.in(2);
    args.gamma = o.in(3);
    rms_norm_backward(args);
  }
}

void attention(const Operands& o, const Attributes& a) {
  AttentionForwardArgs args;
  const TensorView qkv = o.in(0);
  args.q = qkv_part(qkv, 0);
  args.k = qkv_part(qkv, 1);
  args.v = qkv_part(qkv, 2);
  args.out = o.out(0);
  args.lse = o.out(1);
  args.heads = a.heads;
  attention_forward(args);
}

void attention_backward_node(const Operands& o, const Attributes& a) {
  AttentionBackwardArgs args;
  const TensorView qkv = o.in(0), dqkv = o.out(0);
  args.q = qkv_part(qkv, 0);
  args.k = qkv_part(qkv, 1);
  args.v = qkv_part(qkv, 2);
  args.out = o.in(1);
  args.lse = o.in(2);
  args.dout = o.in(3);
  args.dq = qkv_part(dqkv, 0);
  args.dk = qkv_part(dqkv, 1);
  args.dv = qkv_part(dqkv, 2);
  args.heads = a.heads;
  attention_backward(args);
}

}  // namespace

void run_node_kernel(const Graph& g, const Node& n, const std::vector<void*>& data, const ExecutorOptions& options,
                     NodeRecord& record) {
  const Operands o(g, n, data, options);
  const Attributes& a = n.attrs;
  record.fp16_gemm = false;
  record.gemm_calls = 0;
  record.fp16_subnormal_inputs = record.fp16_subnormal_outputs = 0;
  switch (n.op) {
    case OpKind::Embedding: return embedding_forward(o.in_flat(0), o.in(1), o.out_2d(0));
    case OpKind::Linear: return linear(o, a, record);
    case OpKind::LayerNorm: return norm_forward(o, a, true);
    case OpKind::RMSNorm: return norm_forward(o, a, false);
    case OpKind::Gelu: return gelu_forward(o.in(0), o.out(0), a.gelu_variant);
    case OpKind::Add: return add(o.in(0), o.in(1), o.out(0));
    case OpKind::Attention: return attention(o, a);
    case OpKind::SoftmaxCrossEntropy:
      return softmax_cross_entropy_forward(o.in_2d(0), o.in_flat(1), o.out(0), o.out(1));
    case OpKind::Cast: return convert(o.in(0), o.out(0));
    case OpKind::Yield: return;
    case OpKind::EmbeddingBackward: return embedding_backward(o.in_flat(0), o.in_2d(1), o.out(0), false);
    case OpKind::LinearBackward: return linear_backward_node(o, a, record);
    case OpKind::LayerNormBackward: return norm_backward(o, true);
    case OpKind::RMSNormBackward: return norm_backward(o, false);
    case OpKind::GeluBackward: return gelu_backward(o.in(0), o.in(1), o.out(0), a.gelu_variant);
    case OpKind::AttentionBackward: return attention_backward_node(o, a);
    case OpKind::SoftmaxCrossEntropyBackward: {
      const float dloss = o.in_scalar(3);
      return softmax_cross_entropy_backward(o.in_2d(0), o.in_flat(1), o.in(2), dloss, o.out_2d(0));
    }
  }
  fail_with(ErrorKind::internal, "graph executor", "unknown op kind ", static_cast<int>(n.op));
}

}  // namespace ampkit::graph
