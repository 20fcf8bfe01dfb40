// The prepared calls of the ops the training graph runs (ops layer, internal): each prepare_*
// decodes and validates its arguments exactly as the public call does (same checks, same
// messages, both stages) and returns the problem with its kernel list; run_prepared runs it
// (selecting the entry on the first run, and again only when the ISA cap or
// set_reference_kernels changed, ops::PreparedCall). The public calls are prepare + one run, so
// both paths are one. What a run still does per call is said at each op: the empty-problem rules,
// the value checks of ids and targets (their contents change between runs), the loss gradient
// scalar, the GEMM counters. Defined by each op's front end (src/ops/<op>/); used by the graph's
// op definitions (src/graph/ops/) and Linear (src/layers/).
#pragma once

#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "ops/activation/activation_kernels.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/convert/convert_kernels.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/embedding/embedding_kernels.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/norm/norm_kernels.hpp"
#include "ops/pool2d/pool2d_kernels.hpp"  // PreparedPool2d, prepare_pool2d_*
#include "ops/prepared_call.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::ops {

/// GEMM: the validated problem (the fp16 mode's flags included) and its entry. A run calls the
/// entry directly when the backend's whole-call rule is "select, then run" (m, n >= 1 and a
/// product to compute: gemm_runs_one_entry, gemm_kernels.hpp), else the backend's gemm_call, which applies the
/// m = 0, n = 0 and alpha = 0 rules, at each run. `want_report`: the runs fill a GemmReport
/// (and count f16 subnormals where a count can be non-zero), as gemm(args, &report) does.
struct PreparedGemm {
  PreparedCall<GemmProblem, GemmRunFn> call;
  GemmCallFn whole_call = nullptr;
};
PreparedGemm prepare_gemm(const GemmArgs& args, bool want_report);
void run_prepared(PreparedGemm& gemm, GemmReport* report);

using PreparedNormForward = PreparedCall<NormForwardProblem, NormForwardFn>;
using PreparedNormBackward = PreparedCall<NormBackwardProblem, NormBackwardFn>;
PreparedNormForward prepare_norm_forward(NormKind kind, const NormForwardArgs& args);
PreparedNormBackward prepare_norm_backward(NormKind kind, const NormBackwardArgs& args);
void run_prepared(PreparedNormForward& call);
void run_prepared(PreparedNormBackward& call);

using PreparedGelu = PreparedCall<GeluProblem, GeluFn>;
PreparedGelu prepare_gelu_forward(const TensorView& x, const TensorView& y, GeluVariant variant);
PreparedGelu prepare_gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                   GeluVariant variant);
void run_prepared(PreparedGelu& call);

using PreparedElementwise = PreparedCall<ElementwiseProblem, ElementwiseFn>;
PreparedElementwise prepare_add(const TensorView& a, const TensorView& b, const TensorView& out);
void run_prepared(PreparedElementwise& call);

using PreparedConvert = PreparedCall<ConvertProblem, ConvertFn>;
PreparedConvert prepare_convert(const TensorView& src, const TensorView& dst);
void run_prepared(PreparedConvert& call);

using PreparedAttentionForward = PreparedCall<AttentionForwardProblem, AttentionForwardFn>;
using PreparedAttentionBackward = PreparedCall<AttentionBackwardProblem, AttentionBackwardFn>;
PreparedAttentionForward prepare_attention_forward(const AttentionForwardArgs& args);
PreparedAttentionBackward prepare_attention_backward(const AttentionBackwardArgs& args);
void run_prepared(PreparedAttentionForward& call);
void run_prepared(PreparedAttentionBackward& call);

/// Embedding: every run checks the ids against the vocabulary first (they change between runs;
/// on a GPU a host copy, as the call makes), then runs the entry.
using PreparedEmbeddingForward = PreparedCall<EmbeddingForwardProblem, EmbeddingForwardFn>;
using PreparedEmbeddingBackward = PreparedCall<EmbeddingBackwardProblem, EmbeddingBackwardFn>;
PreparedEmbeddingForward prepare_embedding_forward(const TensorView& ids, const TensorView& table,
                                                   const TensorView& out);
PreparedEmbeddingBackward prepare_embedding_backward(const TensorView& ids, const TensorView& dout,
                                                     const TensorView& dtable, bool accumulate);
void run_prepared(PreparedEmbeddingForward& call);
void run_prepared(PreparedEmbeddingBackward& call);

/// Softmax cross-entropy: every run checks the targets against the class count; the backward
/// takes its dloss at each run (checked finite, as the call checks it).
struct PreparedSoftmaxCrossEntropy {
  PreparedCall<SoftmaxCrossEntropyProblem, SoftmaxCrossEntropyFn> call;
  bool backward = false;
};
PreparedSoftmaxCrossEntropy prepare_softmax_cross_entropy_forward(const TensorView& logits, const TensorView& targets,
                                                                  const TensorView& loss, const TensorView& lse);
/// The dloss of each run is given to run_prepared; the one here is validated like any other.
PreparedSoftmaxCrossEntropy prepare_softmax_cross_entropy_backward(const TensorView& logits, const TensorView& targets,
                                                                   const TensorView& lse, float dloss,
                                                                   const TensorView& dlogits);
void run_prepared(PreparedSoftmaxCrossEntropy& call, float dloss = 0.0f);

}  // namespace ampkit::ops
