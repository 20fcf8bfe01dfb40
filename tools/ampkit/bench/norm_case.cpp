// The cases of `ampkit bench norm` (tools layer, bench/): parsing shapes and dtype mixes, the
// bytes a call moves. See norm_case.hpp.
#include "tools/ampkit/bench/norm_case.hpp"

#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {

const char* norm_op_name(NormOp op) { return op == NormOp::layer_norm ? "layer_norm" : "rms_norm"; }
const char* norm_pass_name(NormPass p) { return p == NormPass::forward ? "forward" : "backward"; }

NormShape parse_norm_shape(const std::string& text) {
  NormShape s;
  s.text = text;
  for (const std::string& d : cli::split_list(text, 'x'))
    s.dims.push_back(cli::parse_int(d, "--shapes (each dim)", 1, std::int64_t{1} << 40));
  if (s.dims.empty()) cli::usage_fail("--shapes expects items like 64x128x56x56, but got '", text, "'");
  // The element count in checked arithmetic (a wrapped product would make a 0-row benchmark),
  // and in double for the message.
  std::int64_t elements = 1;
  double approximate = 1.0;
  bool overflow = false;
  for (const std::int64_t d : s.dims) {
    overflow = overflow || __builtin_mul_overflow(elements, d, &elements);
    approximate *= static_cast<double>(d);
  }
  if (overflow || elements > kMaxNormElements)
    cli::usage_fail("--shapes: ", text, " has ", approximate, " elements; expected at most 2^36 (", kMaxNormElements,
                    ")");
  s.n = s.dims.back();
  s.rows = elements / s.n;
  return s;
}

DtypeMix parse_dtype_mix(const std::string& name) {
  if (name == "f32") return {name, DType::f32, DType::f32};
  if (name == "bf16") return {name, DType::bf16, DType::bf16};
  if (name == "mixed") return {name, DType::bf16, DType::f32};
  if (name == "f16") return {name, DType::f16, DType::f16};
  if (name == "mixed_f16") return {name, DType::f16, DType::f32};
  cli::usage_fail("--dtype expects f32, bf16, mixed, f16, mixed_f16 or all, but got '", name, "'");
}

std::int64_t bytes_moved(NormOp op, NormPass pass, const NormShape& s, const DtypeMix& d) {
  const auto sx = static_cast<std::int64_t>(dtype_size(d.x));
  const auto sp = static_cast<std::int64_t>(dtype_size(d.param));
  const std::int64_t tensors = pass == NormPass::forward ? 2 : 3;
  const std::int64_t stats = op == NormOp::layer_norm ? 2 : 1;
  const std::int64_t params = pass == NormPass::forward ? stats : 1 + stats;
  return tensors * s.elements() * sx + params * s.n * sp + stats * s.rows * 4;
}

double gbps(const NormRow& r) { return static_cast<double>(r.bytes) / (r.ampkit.median_ms * 1e-3) / 1e9; }

}  // namespace ampkit::tools::bench
