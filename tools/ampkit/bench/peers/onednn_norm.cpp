// oneDNN's layer normalization as the peer of `ampkit bench norm` (tools layer, bench/peers/;
// benchmarks only). Primitives and a user-managed scratchpad are created once per case; execution wraps
// the caller's buffers without copies. See onednn_norm.hpp.
#include "tools/ampkit/bench/peers/onednn_norm.hpp"

#if AMPKIT_HAVE_ONEDNN

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

namespace ampkit::tools {

struct OnednnLayerNorm::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::layer_normalization_forward forward;
  dnnl::layer_normalization_backward backward;
  std::unordered_map<int, dnnl::memory> forward_args;
  std::unordered_map<int, dnnl::memory> backward_args;
  std::vector<unsigned char> forward_scratch;  // allocated once, touched by the first run
  std::vector<unsigned char> backward_scratch;
};

OnednnLayerNorm::OnednnLayerNorm(std::int64_t rows, std::int64_t n, DType x_dtype, DType param_dtype, float eps,
                                 const OnednnNormBuffers& b) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  if (param_dtype != DType::f32) {
    reason_ = "oneDNN 2.6 layer normalization takes scale/shift and their gradients in f32 only";
    return;
  }
  const dt data_type = x_dtype == DType::f32 ? dt::f32 : x_dtype == DType::bf16 ? dt::bf16 : dt::f16;
  try {
    auto s = std::make_unique<State>();
    const dnnl::memory::desc data_md({rows, n}, data_type, tag::ab);
    const dnnl::memory::desc stat_md({rows}, dt::f32, tag::a);
    const dnnl::memory::desc param_md({n}, dt::f32, tag::a);
    const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

    const dnnl::layer_normalization_forward::desc fwd_desc(dnnl::prop_kind::forward_training, data_md, stat_md, eps,
                                                           flags);
    const dnnl::layer_normalization_forward::primitive_desc fwd_pd(fwd_desc, attr, s->engine);
    const dnnl::layer_normalization_backward::desc bwd_desc(dnnl::prop_kind::backward, data_md, data_md, stat_md, eps,
                                                            flags);
    const dnnl::layer_normalization_backward::primitive_desc bwd_pd(bwd_desc, attr, s->engine, fwd_pd);
    if (fwd_pd.src_desc() != data_md || fwd_pd.dst_desc() != data_md || bwd_pd.diff_src_desc() != data_md ||
        bwd_pd.diff_dst_desc() != data_md) {
      reason_ = "oneDNN chose a non-plain layout for [rows, n] (would need reorders)";
      return;
    }
    forward_impl_ = fwd_pd.impl_info_str();
    backward_impl_ = bwd_pd.impl_info_str();
    s->forward = dnnl::layer_normalization_forward(fwd_pd);
    s->backward = dnnl::layer_normalization_backward(bwd_pd);
    s->forward_scratch.resize(fwd_pd.scratchpad_desc().get_size() + 1);
    s->backward_scratch.resize(bwd_pd.scratchpad_desc().get_size() + 1);

    auto wrap = [&](const dnnl::memory::desc& md, const void* p) {
      return dnnl::memory(md, s->engine, const_cast<void*>(p));
    };
    const dnnl::memory x = wrap(data_md, b.x), mean = wrap(stat_md, b.mean), variance = wrap(stat_md, b.variance),
                       gamma = wrap(param_md, b.gamma), beta = wrap(param_md, b.beta);
    s->forward_args = {{DNNL_ARG_SRC, x},
                       {DNNL_ARG_DST, wrap(data_md, b.y)},
                       {DNNL_ARG_SCALE, gamma},
                       {DNNL_ARG_SHIFT, beta},
                       {DNNL_ARG_MEAN, mean},
                       {DNNL_ARG_VARIANCE, variance},
                       {DNNL_ARG_SCRATCHPAD, wrap(fwd_pd.scratchpad_desc(), s->forward_scratch.data())}};
    s->backward_args = {{DNNL_ARG_SRC, x},
                        {DNNL_ARG_DIFF_DST, wrap(data_md, b.dy)},
                        {DNNL_ARG_MEAN, mean},
                        {DNNL_ARG_VARIANCE, variance},
                        {DNNL_ARG_SCALE, gamma},
                        {DNNL_ARG_SHIFT, beta},
                        {DNNL_ARG_DIFF_SRC, wrap(data_md, b.dx)},
                        {DNNL_ARG_DIFF_SCALE, wrap(param_md, b.dgamma)},
                        {DNNL_ARG_DIFF_SHIFT, wrap(param_md, b.dbeta)},
                        {DNNL_ARG_SCRATCHPAD, wrap(bwd_pd.scratchpad_desc(), s->backward_scratch.data())}};
    state_ = std::move(s);
  } catch (const dnnl::error& e) {
    reason_ = std::string("oneDNN declined: ") + e.what();
  }
}

OnednnLayerNorm::~OnednnLayerNorm() = default;

void OnednnLayerNorm::forward() {
  state_->forward.execute(state_->stream, state_->forward_args);
  state_->stream.wait();
}

void OnednnLayerNorm::backward() {
  state_->backward.execute(state_->stream, state_->backward_args);
  state_->stream.wait();
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace ampkit::tools

#endif  // AMPKIT_HAVE_ONEDNN
