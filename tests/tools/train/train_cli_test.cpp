// `ampkit train` run as a user would (the built binary): --help, bad options (exit 2), bad data,
// outputs and checkpoints (exit 1), each with its one line on stderr; and a short end-to-end
// run with every output, where the build has the training-graph runtime.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "tests/tools/train/train_test_support.hpp"

namespace ampkit::tools::train {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

Outcome run_train(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string command = AMPKIT_CLI_PATH " train " + args + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

void expect_error(const TempDir& dir, const std::string& args, int code, const std::string& pattern) {
  const Outcome o = run_train(dir, args);
  EXPECT_EQ(o.exit_code, code) << "ampkit train " << args << "\n" << o.err;
  const std::string first = o.err.substr(0, o.err.find('\n'));
  EXPECT_TRUE(std::regex_match(first, std::regex(pattern))) << "ampkit train " << args << "\n  stderr:   " << first
                                                            << "\n  expected: " << pattern;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;  // one line
}

TEST(TrainCli, HelpAndUsageErrors) {
  TempDir dir;
  const Outcome help = run_train(dir, "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: ampkit train [options]", 0), 0u);
  EXPECT_TRUE(help.err.empty());
  expect_error(dir, "--bogus", 2, "ampkit train: error: unknown option '--bogus' \\(ampkit train --help lists the options\\)");
  expect_error(dir, "--width 100 --heads 3", 2, "ampkit train: error: --width 100 must be a multiple of --heads 3 .*");
  expect_error(dir, "--precision fp32 --fp16-alt on", 2, "ampkit train: error: --fp16-alt applies to --precision fp16 only.*");
  expect_error(dir, "--plot loss.png", 2, "ampkit train: error: --plot expects a file name ending in .svg, but got 'loss.png'");
  expect_error(dir, "--steps 10 --warmup 10", 2, "ampkit train: error: --warmup 10 must be less than --steps 10");
}

TEST(TrainCli, BadDataOutputsAndCheckpointsAreRefusedBeforeTraining) {
  TempDir dir;
  spit(dir.file("empty.txt"), "");
  spit(dir.file("binary.bin"), std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  spit(dir.file("latin1.txt"), "na\xefve\n");
  spit(dir.file("tiny.txt"), "Just a short line of text, not enough for a context of 64.\n");
  spit(dir.file("corrupt.safetensors"), std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
  expect_error(dir, "--data " + dir.file("missing.txt"), 1,
               "ampkit train: error: data file '.*/missing.txt': cannot open it: No such file or directory");
  expect_error(dir, "--data " + dir.path(), 1, "ampkit train: error: data file '.*': is a folder, not a file");
  expect_error(dir, "--data " + dir.file("empty.txt"), 1, "ampkit train: error: data file '.*/empty.txt': is empty");
  expect_error(dir, "--data " + dir.file("binary.bin"), 1,
               "ampkit train: error: data file '.*/binary.bin': not UTF-8 text: a NUL byte at byte 7 \\(line 1\\); binary "
               "files are not accepted");
  expect_error(dir, "--data " + dir.file("latin1.txt"), 1,
               "ampkit train: error: data file '.*/latin1.txt': not UTF-8 text: a UTF-8 sequence starting with 0xef whose "
               "byte 2 is 0x76 .*");
  expect_error(dir, "--data " + dir.file("tiny.txt"), 1,
               "ampkit train: error: .*/tiny.txt: the training text has 54 characters, but --context 64 needs at least 65 .*");
  expect_error(dir, "--data " + dir.file("tiny.txt") + " --log " + dir.file("no/such/log.jsonl"), 1,
               "ampkit train: error: --log '.*/no/such/log.jsonl': the folder '.*/no/such' does not exist");
  expect_error(dir, "--checkpoint " + dir.path(), 1, "ampkit train: error: --checkpoint '.*': is a folder; expected a file name");
  expect_error(dir, "--resume " + dir.file("corrupt.safetensors"), 1,
               "ampkit train: error: checkpoint '.*/corrupt.safetensors': truncated: the header needs 16 bytes, but only "
               "5 follow its length");
  expect_error(dir, "--resume " + dir.file("missing.safetensors"), 1,
               "ampkit train: error: checkpoint '.*/missing.safetensors': cannot open it: No such file or directory");
  // Nothing was written by the refused runs.
  EXPECT_FALSE(std::filesystem::exists(dir.file("no")));
}

// A short real run with every output, then a resume; skipped while the build has no runtime.
TEST(TrainCli, ShortRunWritesEveryOutputAndResumes) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "The quick brown fox " + std::to_string(i % 7) + " jumps over the lazy dog.\n%\n";
  spit(dir.file("fox.txt"), text);
  const std::string common = "--data " + dir.file("fox.txt") +
                             " --width 16 --heads 2 --depth 1 --context 16 --batch 4 --eval-every 5 --sample-tokens 20"
                             " --precision fp32 --threads 1";
  const Outcome o = run_train(dir, common + " --steps 10 --log " + dir.file("log.jsonl") + " --plot " + dir.file("loss.svg") +
                                       " --checkpoint " + dir.file("run.safetensors"));
  if (o.exit_code == 1 && o.err.find("no training-graph runtime") != std::string::npos)
    GTEST_SKIP() << "this build has no training-graph runtime yet";
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("validation loss "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("perplexity"), std::string::npos);
  EXPECT_NE(o.out.find("tokens/s"), std::string::npos);
  EXPECT_NE(o.out.find("samples (temperature"), std::string::npos);
  EXPECT_NE(o.err.find("step 10/10"), std::string::npos) << o.err;  // plain progress lines off a terminal
  EXPECT_EQ(o.err.find('\r'), std::string::npos);
  const std::string log = slurp(dir.file("log.jsonl"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 10);
  EXPECT_NE(slurp(dir.file("loss.svg")).find("<polyline id=\"validation\""), std::string::npos);
  const Outcome more = run_train(dir, "--resume " + dir.file("run.safetensors") + " --steps 12 --sample-tokens 0");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_NE(more.out.find("resuming"), std::string::npos);
  expect_error(dir, "--resume " + dir.file("run.safetensors") + " --width 32 --heads 2", 1,
               "ampkit train: error: --resume: the checkpoint was saved with --width 16, but this run has --width 32 .*");
}

}  // namespace
}  // namespace ampkit::tools::train
