// `ampkit` — the command-line tool (tools layer): the table of subcommands. Parsing, the
// environment check and the exit codes (0 ok, 1 ampkit::Error, 2 usage, 70 internal) are in
// cli/dispatch.cpp; each subcommand lives in its own file (commands.hpp).
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/commands.hpp"

namespace {

using ampkit::tools::cli::Command;

constexpr Command kCommands[] = {
    {"train", "", ampkit::tools::run_train, "train a small GPT (or MLP) on text: progress, log, plot, checkpoints"},
    {"sample", "", ampkit::tools::run_sample, "continue a prompt with text sampled from a training checkpoint"},
    {"info", "", ampkit::tools::run_info, "CPU features, active ISA, threads; --kernels: each op's kernel list"},
    {"bench", "gemm", ampkit::tools::run_bench_gemm, "gemm GFLOP/s vs the machine's peaks, OpenBLAS, oneDNN"},
    {"bench", "linear", ampkit::tools::run_bench_linear, "Linear forward/backward GFLOP/s vs peaks and peers"},
    {"bench", "norm", ampkit::tools::run_bench_norm, "LayerNorm/RMSNorm speed vs copy bandwidth and oneDNN"},
    {"bench", "attention", ampkit::tools::run_bench_attention,
     "causal attention forward/backward TFLOP/s on the GPU vs the tensor-core ceiling"},
    {"bench", "train", ampkit::tools::run_bench_train,
     "one training step of the default GPT: nodes, rest, fused vs unfused"},
    {"check", "kernels", ampkit::tools::run_check_kernels,
     "every GEMM and norm kernel against the reference, every ISA"},
    {"check", "fp16", ampkit::tools::run_check_fp16, "fp16 gradient underflow (MI200 model) and the alt-impl policy"},
};

}  // namespace

int main(int argc, char** argv) { return ampkit::tools::cli::run_main(argc, argv, kCommands); }
