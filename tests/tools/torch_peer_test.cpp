// The PyTorch peers of `ampkit bench gemm|norm` (tools/ampkit/bench/peers/torch_*): the cases
// they pass to the script, how they read its JSON lines, and what they say when PyTorch or the
// script is missing. A stand-in interpreter (a shell script given as AMPKIT_PYTHON) answers
// `-c 'import torch'` and echoes canned lines, so no PyTorch is needed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tools/ampkit/bench/peers/torch_gemm_peer.hpp"
#include "tools/ampkit/bench/peers/torch_norm_peer.hpp"

namespace ampkit::tools::bench {
namespace {

// A directory of its own with a fake interpreter: `-c ...` exits 0 (torch "imports"); otherwise
// it writes its arguments to args.txt and prints `output`.
class FakePython {
 public:
  explicit FakePython(const std::string& output) {
    char templ[] = "/tmp/ampkit_torch_peer_XXXXXX";
    dir_ = mkdtemp(templ);
    const std::string py = dir_ + "/python";
    std::ofstream(dir_ + "/out.txt") << output;
    std::ofstream(py) << "#!/bin/sh\n"
                         "[ \"$1\" = -c ] && exit 0\n"
                         "printf '%s\\n' \"$@\" > " << dir_ << "/args.txt\n"
                      << "cat " << dir_ << "/out.txt\n";
    chmod(py.c_str(), 0700);
    setenv("AMPKIT_PYTHON", py.c_str(), 1);
  }
  ~FakePython() {
    unsetenv("AMPKIT_PYTHON");
    for (const char* f : {"/python", "/out.txt", "/args.txt"}) unlink((dir_ + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string args() const {
    std::ifstream in(dir_ + "/args.txt");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string dir_;
};

TEST(TorchPeers, GemmCasesGoToTheScriptAndTheirLinesComeBackInOrder) {
  FakePython py(
      "loading...\n"
      "{\"dtype\": \"f32\", \"gflops\": 120.5, \"version\": \"2.11.0\"}\n"
      "{\"dtype\": \"bf16\", \"skipped\": \"not measured by this script\"}\n");
  std::vector<TorchGemmCase> cases = {{{4096, 16, 1024, Op::T, Op::N}, "f32", "BIAS"},
                                      {{8, 8, 8, Op::N, Op::T}, "bf16", "DEFAULT"}};
  std::string version, why;
  const std::vector<double> g = run_torch_gemm_peer(cases, 2, 5, 200.0, version, why);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], 120.5);
  EXPECT_TRUE(std::isnan(g[1]));
  EXPECT_EQ(version, "2.11.0");
  EXPECT_EQ(why, "");
  const std::string args = py.args();
  EXPECT_NE(args.find("torch_gemm_cpu.py"), std::string::npos) << args;
  EXPECT_NE(args.find("f32:tn:4096:16:1024:BIAS;bf16:nt:8:8:8:DEFAULT;"), std::string::npos) << args;
  EXPECT_NE(args.find("--threads\n2\n"), std::string::npos) << args;
}

TEST(TorchPeers, GemmSaysWhenTheScriptPrintedTooFewCases) {
  FakePython py("{\"gflops\": 3.0}\n");
  std::vector<TorchGemmCase> cases(3, TorchGemmCase{{2, 2, 2, Op::N, Op::N}, "f32", "DEFAULT"});
  std::string version, why;
  const std::vector<double> g = run_torch_gemm_peer(cases, 1, 5, 200.0, version, why);
  EXPECT_EQ(g[0], 3.0);
  EXPECT_TRUE(std::isnan(g[2]));
  EXPECT_EQ(why, "PyTorch GEMM peer printed 1 of 3 cases");
}

TEST(TorchPeers, NormPointsCarryTimesAndPyTorchsRefusals) {
  FakePython py(
      "{\"op\": \"layer_norm\", \"ms\": 0.25, \"version\": \"1.13.0\"}\n"
      "{\"op\": \"layer_norm\", \"skipped\": \"RuntimeError: expected scalar type BFloat16 but found Float\"}\n");
  std::vector<TorchNormCase> cases = {{"layer_norm", "forward", "f32", "f32", 16, 64},
                                      {"layer_norm", "backward", "bf16", "f32", 16, 64}};
  std::string version, why;
  const std::vector<TorchNormPoint> p = run_torch_norm_peer(cases, 1, 5, 100.0, version, why);
  ASSERT_EQ(p.size(), 2u) << why;
  EXPECT_EQ(p[0].ms, 0.25);
  EXPECT_EQ(p[0].skipped, "");
  EXPECT_EQ(p[1].ms, 0.0);
  EXPECT_EQ(p[1].skipped, "RuntimeError: expected scalar type BFloat16 but found Float");
  EXPECT_EQ(version, "1.13.0");
  EXPECT_NE(py.args().find("layer_norm:backward:bf16:f32:16:64;"), std::string::npos) << py.args();
}

TEST(TorchPeers, NormGivesNothingWhenTheLinesDoNotMatchTheCases) {
  FakePython py("{\"ms\": 1.0}\n");
  std::vector<TorchNormCase> cases(2, TorchNormCase{"rms_norm", "forward", "f32", "f32", 4, 4});
  std::string version, why;
  EXPECT_TRUE(run_torch_norm_peer(cases, 1, 5, 100.0, version, why).empty());
  EXPECT_EQ(why, "PyTorch norm peer printed 1 of 2 cases");
}

TEST(TorchPeers, WithoutPyTorchTheyMeasureNothingAndSayWhy) {
  setenv("AMPKIT_PYTHON", "/bin/false", 1);
  std::string version, why;
  const std::vector<double> g =
      run_torch_gemm_peer({{{2, 2, 2, Op::N, Op::N}, "f32", "DEFAULT"}}, 1, 5, 200.0, version, why);
  unsetenv("AMPKIT_PYTHON");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(std::isnan(g[0]));
  EXPECT_EQ(why.rfind("PyTorch not importable", 0), 0u) << why;
}

}  // namespace
}  // namespace ampkit::tools::bench
