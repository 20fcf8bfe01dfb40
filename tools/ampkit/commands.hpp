// The subcommands of the `ampkit` command-line tool (tools layer), listed in main.cpp's table.
// Each returns the process exit code; what escapes one (cli::UsageError, ampkit::Error) becomes
// one line on stderr and an exit code in cli/dispatch.cpp.
#pragma once

#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools {

int run_info(const Args& args);             // info.cpp: CPU features, active ISA, threads, kernels
int run_bench_gemm(const Args& args);       // bench/gemm.cpp: gemm vs peaks and peers
int run_bench_linear(const Args& args);     // bench/linear.cpp: Linear passes vs peaks and peers
int run_bench_norm(const Args& args);       // bench/norm.cpp: LayerNorm/RMSNorm vs copy bandwidth
int run_bench_train(const Args& args);      // bench/train.cpp: a training step, per node kind
int run_bench_attention(const Args& args);  // bench/attention.cpp: causal attention on the GPU vs the TC peak
int run_check_fp16(const Args& args);       // check/fp16.cpp: fp16 underflow and the policy that fixes it
int run_check_kernels(const Args& args);    // check/kernels.cpp: every kernel against the reference
int run_train(const Args& args);            // train/train_command.cpp: train a character-level model on text
int run_sample(const Args& args);           // train/sample_command.cpp: continue a prompt from a checkpoint

}  // namespace ampkit::tools
