// The subcommands of the `ampkit` command-line tool (tools layer). Each lives in its own file
// and returns the process exit code; ampkit::Error escaping one becomes one line on stderr.
#pragma once

#include <string>
#include <vector>

namespace ampkit::tools {

using Args = std::vector<std::string>;

int run_info(const Args& args);        // info.cpp: CPU features, active ISA, threads
int run_bench_gemm(const Args& args);   // bench_gemm.cpp: gemm vs peaks and peers
int run_bench_linear(const Args& args); // bench_linear.cpp: Linear passes vs peaks and peers
int run_bench_norm(const Args& args);  // bench_norm.cpp: LayerNorm/RMSNorm benchmark
int run_check_fp16(const Args& args);  // check_fp16.cpp: fp16 underflow and the policy that fixes it

}  // namespace ampkit::tools
