// gemm_with_policy (numerics layer): ampkit::gemm with the fp16 mode decided by the policy on the
// calling thread, and the call's report added to the process-wide fp16 counters.
// Called by the layers (Linear) and the graph executor; the GEMM kernels themselves never read
// the policy.
#include "ampkit/numerics/fp16_policy.hpp"

namespace ampkit {

void gemm_with_policy(GemmArgs args, GemmReport* report) {
  if (!is_fp16_gemm({args.a_dtype, args.b_dtype})) {
    gemm(args, report);  // the policy only concerns fp16 operands
    return;
  }
  // Resolved here, once, on the thread that issues the GEMM: gemm's worker threads do not see
  // this thread's BackwardPassGuard.
  args.fp16_mode = gemm_fp16_mode();
  GemmReport local;
  GemmReport& out = report != nullptr ? *report : local;
  gemm(args, &out);
  add_fp16_gemm_report(out);
}

}  // namespace ampkit
