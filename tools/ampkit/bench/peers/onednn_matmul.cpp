// oneDNN matmul as a benchmark peer (tools layer, bench/peers/; oneDNN only with AMPKIT_HAVE_ONEDNN): f32 and bf16,
// optionally with a bias and an eltwise gelu_tanh post-op, the closest oneDNN has to ampkit's
// BIAS and GELU_AUX_BIAS epilogues. oneDNN does not save the pre-activation (no aux output), so
// its GELU figure does one m x n write less than ampkit's. Run in a phase of its own (never
// interleaved with the OpenBLAS child). Called by bench/gemm_peer_phases.cpp.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include "tools/ampkit/bench/peers/onednn_matmul.hpp"

#if AMPKIT_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace ampkit::tools::bench {

bool onednn_available() {
#if AMPKIT_HAVE_ONEDNN
  return true;
#else
  return false;
#endif
}

PeerPoint onednn_matmul_time(const PeerShape& shape, DType dtype, OnednnPostOp post, int threads,
                             const MeasureOptions& options, std::string& note) {
  PeerPoint point;
  point.shape = shape;
  point.threads = threads;
  point.ms = point.gflops = std::nan("");
#if !AMPKIT_HAVE_ONEDNN
  (void)dtype, (void)post, (void)options;
  note = "oneDNN peer not built (install libdnnl-dev and re-run cmake)";
  return point;
#else
  if (dtype == DType::f16) {
    note = "oneDNN 2.6 has no f16 matmul on this CPU";
    return point;
  }
  try {
    using dnnl::memory;
    using tag = memory::format_tag;
    const memory::data_type dt = dtype == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    // ampkit's column-major D (m x n) is oneDNN's row-major dst (n x m) = src (n x k) *
    // weights (k x m): src is B (row-major n x k when op_b = N), weights is A (row-major k x m
    // when op_a = N, i.e. tag ba when A is transposed), bias broadcast over dst's columns (m).
    const memory::dims src_dims = {shape.n, shape.k}, wei_dims = {shape.k, shape.m}, dst_dims = {shape.n, shape.m},
                       bias_dims = {1, shape.m};
    const memory::desc src_md(src_dims, dt, shape.op_b == Op::N ? tag::ab : tag::ba);
    const memory::desc wei_md(wei_dims, dt, shape.op_a == Op::N ? tag::ab : tag::ba);
    const memory::desc dst_md(dst_dims, dt, tag::ab);
    const memory::desc bias_md(bias_dims, memory::data_type::f32, tag::ab);
    omp_set_num_threads(threads);
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    dnnl::primitive_attr attr;
    if (post == OnednnPostOp::bias_gelu_tanh) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    const bool bias = post != OnednnPostOp::none;
    const auto desc =
        bias ? dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md) : dnnl::matmul::desc(src_md, wei_md, dst_md);
    const dnnl::matmul::primitive_desc pd(desc, attr, engine);
    const dnnl::matmul prim(pd);
    memory src(src_md, engine), wei(wei_md, engine), dst(dst_md, engine), bias_mem(bias_md, engine);
    // Small values; the bytes of a bf16/f32 fill pattern are all that matter for timing.
    for (memory* m : {&src, &wei, &dst, &bias_mem}) std::memset(m->get_data_handle(), 0x3c, m->get_desc().get_size());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (bias) args[DNNL_ARG_BIAS] = bias_mem;
    const Measurement m = measure(
        [&] {
          prim.execute(stream, args);
          stream.wait();
        },
        options);
    point.ms = m.median_ms;
    point.gflops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k) /
                   (m.median_ms * 1e6);
    note = std::string("oneDNN matmul: ") + pd.impl_info_str();
  } catch (const dnnl::error& e) {
    note = std::string("oneDNN declined: ") + e.what();
  }
  return point;
#endif
}

}  // namespace ampkit::tools::bench
