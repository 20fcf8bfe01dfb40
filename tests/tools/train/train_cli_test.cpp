// `ampkit train` and `ampkit sample` run as a user would (the built binary): --help, bad options
// (exit 2), bad data, outputs and checkpoints (exit 1), each with its one line on stderr; a short
// end-to-end run with every output and a resume; sampling from its checkpoint; the fp16 report.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "ampkit/device/cuda.hpp"
#include "ampkit/train/safetensors.hpp"
#include "ampkit/version.hpp"
#include "tests/train/train_test_support.hpp"

namespace ampkit::tools::train {
namespace {

using namespace ampkit::train;  // the test helpers (tests/train/train_test_support.hpp)

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// Runs `ampkit <command_and_args>`.
Outcome run_ampkit(const TempDir& dir, const std::string& command_and_args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string command = AMPKIT_CLI_PATH " " + command_and_args + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

Outcome run_train(const TempDir& dir, const std::string& args) { return run_ampkit(dir, "train " + args); }

// dir/fox.txt: 200 short documents in the fortunes format.
void write_fox_text(const TempDir& dir) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "The quick brown fox " + std::to_string(i % 7) + " jumps over the lazy dog.\n%\n";
  spit(dir.file("fox.txt"), text);
}

void expect_error(const TempDir& dir, const std::string& args, int code, const std::string& pattern) {
  const Outcome o = run_train(dir, args);
  EXPECT_EQ(o.exit_code, code) << "ampkit train " << args << "\n" << o.err;
  const std::string first = o.err.substr(0, o.err.find('\n'));
  EXPECT_TRUE(std::regex_match(first, std::regex(pattern)))
      << "ampkit train " << args << "\n  stderr:   " << first << "\n  expected: " << pattern;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;  // one line
}

TEST(TrainCli, HelpAndUsageErrors) {
  TempDir dir;
  const Outcome help = run_train(dir, "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: ampkit train [options]", 0), 0u);
  EXPECT_TRUE(help.err.empty());
  expect_error(dir, "--bogus", 2,
               "ampkit train: error: unknown option '--bogus' \\(ampkit train --help lists the options\\)");
  expect_error(dir, "--width 100 --heads 3", 2, "ampkit train: error: --width 100 must be a multiple of --heads 3 .*");
  expect_error(dir, "--precision fp32 --fp16-alt on", 2,
               "ampkit train: error: --fp16-alt applies to --precision fp16 only.*");
  expect_error(dir, "--plot loss.png", 2,
               "ampkit train: error: --plot expects a file name ending in .svg, but got 'loss.png'");
  expect_error(dir, "--steps 10 --warmup 10", 2, "ampkit train: error: --warmup 10 must be less than --steps 10");
  expect_error(dir, "--checkpoint a.safetensors --keep-best a.safetensors", 2,
               "ampkit train: error: --checkpoint and --keep-best name the same file 'a.safetensors'");
  expect_error(dir, "--resume a.safetensors --keep-best a.safetensors", 2,
               "ampkit train: error: --keep-best and --resume name the same file 'a.safetensors' .*");
  expect_error(dir, "--keep-best", 2,
               "ampkit train: error: option --keep-best expects a value \\(FILE\\), but got none");
  expect_error(dir, "--keep-bset x", 2,
               "ampkit train: error: unknown option '--keep-bset' \\(did you mean --keep-best\\? .*");
}

TEST(TrainCli, BadDataOutputsAndCheckpointsAreRefusedBeforeTraining) {
  TempDir dir;
  spit(dir.file("empty.txt"), "");
  spit(dir.file("binary.bin"), std::string("\x7f"
                                           "ELF\x02\x01\x01\0\0\0",
                                           10));
  spit(dir.file("latin1.txt"), "na\xefve\n");
  spit(dir.file("tiny.txt"), "Just a short line of text, not enough for a context of 64.\n");
  spit(dir.file("corrupt.safetensors"), std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
  expect_error(dir, "--data " + dir.file("missing.txt"), 1,
               "ampkit train: error: data file '.*/missing.txt': cannot open it: No such file or directory");
  expect_error(dir, "--data " + dir.path(), 1, "ampkit train: error: data file '.*': is a folder, not a file");
  expect_error(dir, "--data " + dir.file("empty.txt"), 1, "ampkit train: error: data file '.*/empty.txt': is empty");
  expect_error(
      dir, "--data " + dir.file("binary.bin"), 1,
      "ampkit train: error: data file '.*/binary.bin': not UTF-8 text: a NUL byte at byte 7 \\(line 1\\); binary "
      "files are not accepted");
  expect_error(
      dir, "--data " + dir.file("latin1.txt"), 1,
      "ampkit train: error: data file '.*/latin1.txt': not UTF-8 text: a UTF-8 sequence starting with 0xef whose "
      "byte 2 is 0x76 .*");
  expect_error(
      dir, "--data " + dir.file("tiny.txt"), 1,
      "ampkit train: error: .*/tiny.txt: the training text has 54 characters, but --context 64 needs at least 65 .*");
  expect_error(dir, "--data " + dir.file("tiny.txt") + " --log " + dir.file("no/such/log.jsonl"), 1,
               "ampkit train: error: --log '.*/no/such/log.jsonl': the folder '.*/no/such' does not exist");
  expect_error(
      dir, "--data " + dir.file("tiny.txt") + " --keep-best " + dir.file("no/such/best.safetensors"), 1,
      "ampkit train: error: --keep-best '.*/no/such/best.safetensors': the folder '.*/no/such' does not exist");
  expect_error(dir, "--checkpoint " + dir.path(), 1,
               "ampkit train: error: --checkpoint '.*': is a folder; expected a file name");
  expect_error(
      dir, "--resume " + dir.file("corrupt.safetensors"), 1,
      "ampkit train: error: checkpoint '.*/corrupt.safetensors': truncated: the header needs 16 bytes, but only "
      "5 follow its length");
  expect_error(dir, "--resume " + dir.file("missing.safetensors"), 1,
               "ampkit train: error: checkpoint '.*/missing.safetensors': cannot open it: No such file or directory");
  // Nothing was written by the refused runs.
  EXPECT_FALSE(std::filesystem::exists(dir.file("no")));
}

// --device: cpu or cuda; cuda without a usable GPU (or without the backend) is refused, saying why.
TEST(TrainCli, DeviceCudaWithoutAGpuIsRefused) {
  TempDir dir;
  write_fox_text(dir);
  expect_error(dir, "--device gpu", 2, "ampkit train: error: --device .*gpu.*");
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a usable GPU";
  expect_error(dir, "--device cuda --steps 2 --width 16 --depth 1 --batch 2 --context 8 --data " + dir.file("fox.txt"),
               1, "ampkit train: error: --device cuda: (this build has no CUDA backend|no CUDA device).*");
}

// A short real run with every output, then a resume; skipped while the build has no runtime.
TEST(TrainCli, ShortRunWritesEveryOutputAndResumes) {
  TempDir dir;
  write_fox_text(dir);
  const std::string common = "--data " + dir.file("fox.txt") +
                             " --width 16 --heads 2 --depth 1 --context 16 --batch 4 --eval-every 5 --sample-tokens 20"
                             " --precision fp32 --threads 1";
  const Outcome o = run_train(dir, common + " --steps 10 --log " + dir.file("log.jsonl") + " --plot " +
                                       dir.file("loss.svg") + " --checkpoint " + dir.file("run.safetensors"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("validation loss "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("perplexity"), std::string::npos);
  EXPECT_NE(o.out.find("tokens/s"), std::string::npos);
  EXPECT_NE(o.out.find("samples (temperature"), std::string::npos);
  EXPECT_NE(o.err.find("step 10/10"), std::string::npos) << o.err;  // plain progress lines off a terminal
  EXPECT_EQ(o.err.find('\r'), std::string::npos);
  const std::string log = slurp(dir.file("log.jsonl"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 11);  // the header and 10 steps
  EXPECT_EQ(log.rfind("{\"format\":\"ampkit-train-log-1\",\"version\":\"" AMPKIT_VERSION "\"", 0), 0u) << log;
  EXPECT_NE(slurp(dir.file("loss.svg")).find("<polyline id=\"validation\""), std::string::npos);
  const Outcome more = run_train(dir, "--resume " + dir.file("run.safetensors") + " --steps 12 --sample-tokens 0");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_NE(more.out.find("resuming"), std::string::npos);
  expect_error(
      dir, "--resume " + dir.file("run.safetensors") + " --width 32 --heads 2", 1,
      "ampkit train: error: --resume: the checkpoint was saved with --width 16, but this run has --width 32 .*");
}

// --init-from: the weights of another run's checkpoint (its final validation loss is the new run's
// step-0 loss); every mismatch is refused naming the tensor, and the refused runs write nothing.
TEST(TrainCli, InitFromStartsAtAnotherRunsWeights) {
  TempDir dir;
  write_fox_text(dir);
  const std::string common = "--data " + dir.file("fox.txt") +
                             " --heads 2 --context 16 --batch 4 --eval-every 0 --sample-tokens 0 --precision fp32"
                             " --threads 1 --steps 6";
  const Outcome a = run_train(dir, common + " --width 16 --depth 1 --checkpoint " + dir.file("a.safetensors"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string final_loss = a.err.substr(a.err.find("step 6: validation loss "));
  const Outcome b = run_train(dir, common + " --width 16 --depth 1 --seed 9 --init-from " + dir.file("a.safetensors"));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::size_t at = b.err.find("step 0: validation loss ");
  ASSERT_NE(at, std::string::npos) << b.err;
  EXPECT_EQ(b.err.substr(at + 7, b.err.find('\n', at) - at - 7),
            final_loss.substr(7, final_loss.find('\n') - 7));  // the same weights, the same loss

  // Files with one thing wrong, made from a.safetensors.
  using ampkit::train::SafeTensor;
  const ampkit::train::SafeTensorsFile good =
      ampkit::train::parse_safetensors(slurp(dir.file("a.safetensors")), "a.safetensors");
  ampkit::train::SafeTensorsFile extra = good, wrong_dtype = good;
  const std::vector<double> zeros(16, 0.0);
  extra.tensors.push_back(SafeTensor::of_f64("h9.ln1.g", {16}, zeros));
  for (SafeTensor& t : wrong_dtype.tensors)
    if (t.name == "ln_f.g") t = SafeTensor::of_f64("ln_f.g", {16}, zeros);
  spit(dir.file("extra.safetensors"), ampkit::train::serialize_safetensors(extra));
  spit(dir.file("dtype.safetensors"), ampkit::train::serialize_safetensors(wrong_dtype));
  const std::string outputs = " --log " + dir.file("log.jsonl") + " --checkpoint " + dir.file("out.safetensors");
  expect_error(dir, common + " --width 32 --depth 1 --init-from " + dir.file("a.safetensors") + outputs, 1,
               "ampkit train: error: --init-from '.*/a.safetensors': tensor 'tok_emb' has shape \\[[0-9]+, 16\\], "
               "the model expects \\[[0-9]+, 32\\]");
  expect_error(dir, common + " --width 16 --depth 2 --init-from " + dir.file("a.safetensors") + outputs, 1,
               "ampkit train: error: --init-from '.*/a.safetensors': the model's weight 'h1.ln1.g' \\[16\\] is "
               "missing from the file");
  expect_error(dir, common + " --width 16 --depth 1 --init-from " + dir.file("extra.safetensors") + outputs, 1,
               "ampkit train: error: --init-from '.*/extra.safetensors': tensor 'h9.ln1.g' \\[16\\] is not a "
               "weight of this model .*");
  expect_error(dir, common + " --width 16 --depth 1 --init-from " + dir.file("dtype.safetensors") + outputs, 1,
               "ampkit train: error: --init-from '.*/dtype.safetensors': tensor 'ln_f.g' is F64, expected F32");
  expect_error(dir, common + " --width 16 --depth 1 --init-from " + dir.file("absent.safetensors") + outputs, 1,
               "ampkit train: error: --init-from '.*/absent.safetensors': cannot open it: No such file or directory");
  std::string other;
  for (int i = 0; i < 8; ++i) other += "Completely different letters: QXZJ qxzj, 0123456789 and more of them.\n";
  spit(dir.file("other.txt"), other);
  expect_error(dir,
               "--data " + dir.file("other.txt") +
                   " --heads 2 --context 16 --batch 4 --steps 6 --width 16 --depth 1 "
                   "--init-from " +
                   dir.file("a.safetensors") + outputs,
               1, "ampkit train: error: --init-from '.*/a.safetensors': its vocabulary is not the training text's .*");
  expect_error(dir, "--init-from a.safetensors --resume b.safetensors", 2,
               "ampkit train: error: --init-from and --resume exclude each other .*");
  EXPECT_FALSE(std::filesystem::exists(dir.file("log.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.safetensors")));
}

// `ampkit sample` continues a prompt from a checkpoint, the same text for the same seed; a prompt
// character the model never saw, a missing checkpoint and a missing --checkpoint are refused
// with one line.
TEST(TrainCli, SampleContinuesAPromptFromACheckpoint) {
  TempDir dir;
  write_fox_text(dir);
  const Outcome o = run_train(dir, "--data " + dir.file("fox.txt") +
                                       " --width 16 --heads 2 --depth 1 --context 16 --batch 4 --steps 4 --eval-every 0"
                                       " --sample-tokens 0 --precision fp32 --threads 1 --checkpoint " +
                                       dir.file("run.safetensors"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string sample = "sample --checkpoint " + dir.file("run.safetensors") + " --tokens 12 --seed 3 --samples 2";
  const Outcome a = run_ampkit(dir, sample + " --prompt 'The qu'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out.rfind("The qu", 0), 0u) << a.out;
  EXPECT_NE(a.out.find("\nThe qu"), std::string::npos) << a.out;  // the second text
  EXPECT_EQ(run_ampkit(dir, sample + " --prompt 'The qu'").out, a.out);
  const Outcome unseen = run_ampkit(dir, sample + " --prompt 'Zebra'");
  EXPECT_EQ(unseen.exit_code, 1);
  EXPECT_NE(unseen.err.find("--prompt: the character 'Z' (U+005A) is not in the model's vocabulary"), std::string::npos)
      << unseen.err;
  EXPECT_EQ(run_ampkit(dir, "sample --checkpoint " + dir.file("absent.safetensors")).exit_code, 1);
  const Outcome usage = run_ampkit(dir, "sample --prompt x");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(usage.err, "ampkit sample: error: --checkpoint FILE is required\n");
}

// fp16 under the MI200 model: the run ends with the fp16 numerics summary and its table per
// layer, the forward GEMMs in flush and the backward ones in alt (the default policy).
TEST(TrainCli, Fp16RunReportsEachLayersGemms) {
  TempDir dir;
  write_fox_text(dir);
  const Outcome o = run_train(dir, "--data " + dir.file("fox.txt") +
                                       " --width 16 --heads 2 --depth 1 --context 16 --batch 4 --steps 3 --eval-every 0"
                                       " --sample-tokens 0 --precision fp16 --fp16-model mi200 --threads 1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("fp16 numerics (mi200 model, alternate GEMM auto):"), std::string::npos) << o.out;
  for (const char* layer : {"h0.attn.qkv", "h0.attn.proj", "h0.mlp.fc1", "h0.mlp.fc2", "head"})
    EXPECT_TRUE(std::regex_search(
        o.out, std::regex(std::string("\n    ") + layer + " +flush [0-9]+ / [0-9]+ +alt [0-9]+ / [0-9]+\n")))
        << layer << "\n"
        << o.out;
}

}  // namespace
}  // namespace ampkit::tools::train
