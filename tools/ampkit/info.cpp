// `ampkit info`: what this machine supports and what ampkit will use (tools layer).
#include <cstdio>

#include "tools/ampkit/commands.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"

namespace ampkit::tools {

int run_info(const Args& args) {
  if (!args.empty()) fail("info", "expected no arguments, but got '", args[0], "'");
  const CpuFeatures& f = cpu_features();
  std::printf("cpu: avx2+fma+f16c=%s avx512(f,bw,dq,vl)=%s avx512_bf16=%s avx512_fp16=%s\n",
              f.avx2 ? "yes" : "no", f.avx512 ? "yes" : "no", f.avx512bf16 ? "yes" : "no",
              f.avx512fp16 ? "yes" : "no");
  std::printf("isa: best=%s active=%s (AMPKIT_ISA caps it)\n", isa_name(f.best()).data(),
              isa_name(active_isa()).data());
  std::printf("threads: %d\n", num_threads());
  return 0;
}

}  // namespace ampkit::tools
