// `ampkit sample` (tools layer, train/): loads an `ampkit train` checkpoint, rebuilds its model
// from the stored configuration and vocabulary (graph_model.cpp), and continues a prompt with
// sampled characters (train_run.cpp's sample_texts: temperature, top-k, seeded). The prompt must
// be UTF-8 made of characters the model was trained on.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/model.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"
#include "tools/ampkit/train/train_run.hpp"

namespace ampkit::tools {

int run_sample(const Args& args) {
  using namespace train;
  std::optional<std::string> checkpoint, prompt, temperature_text;
  std::optional<std::int64_t> tokens, top_k, seed, count, threads;
  cli::OptionParser p("sample",
                      "Continues a prompt with text sampled from a model saved by `ampkit train --checkpoint`.");
  p.text("--checkpoint", "FILE", &checkpoint, "the checkpoint to sample from (required)")
      .text("--prompt", "TEXT", &prompt, "text to continue (default: none, a new document)")
      .integer("--tokens", "N", 1, 100'000, &tokens, "characters to sample after the prompt (default 200)")
      .text("--temperature", "T", &temperature_text, "sampling temperature; 0: greedy (default 0.8)")
      .integer("--top-k", "K", 0, 1'000'000, &top_k, "sample among the K likeliest characters; 0: all (default 20)")
      .integer("--seed", "N", 0, INT64_MAX, &seed, "the sampling seed (default 1)")
      .integer("--samples", "N", 1, 64, &count, "texts to sample (default 1)")
      .integer("--threads", "N", 1, cli::kMaxThreads, &threads, "threads (default OMP_NUM_THREADS or the cores)")
      .footer(
          "Each text stops early at a blank line (the end of a document in the training text).\n"
          "exit codes: 2 for a bad option or value; 1 for a missing or corrupt checkpoint, or a prompt\n"
          "character the model has not seen.");
  if (!p.parse(args)) return 0;
  if (!checkpoint) cli::usage_fail("--checkpoint FILE is required");
  const double temperature = temperature_text ? cli::parse_number(*temperature_text, "--temperature", 0.0, 100.0) : 0.8;

  const TrainCheckpoint saved = load_run_checkpoint(*checkpoint);
  const std::vector<std::int32_t> prompt_tokens = saved.vocabulary.encode(prompt.value_or(""), "--prompt");
  TrainConfig config = saved.config;
  config.batch = count.value_or(1);  // one row per text; the weights do not depend on the batch
  if (threads) set_num_threads(static_cast<int>(*threads));
  if (config.precision == Precision::fp16) {
    set_fp16_device_model(config.fp16_model);
    set_gemm_fp16_alt_impl(config.fp16_alt);
  }
  const std::unique_ptr<GraphModel> model = make_graph_model(config, saved.vocabulary.size());
  model->restore_state(saved, "--checkpoint '" + *checkpoint + "'");

  const std::vector<std::string> texts =
      sample_texts(*model, saved.vocabulary, config.batch, tokens.value_or(200), temperature, top_k.value_or(20),
                   static_cast<std::uint64_t>(seed.value_or(1)), prompt_tokens);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) std::printf("\n");
    std::printf("%s%s\n", prompt.value_or("").c_str(), texts[i].c_str());
  }
  return 0;
}

}  // namespace ampkit::tools
