// The command-line vocabulary `ampkit bench gemm` and `bench linear` share (tools layer, bench/):
// dtype modes, epilogue names and roles, shape triples, run settings. See gemm_case.hpp.
#include "tools/ampkit/bench/gemm_case.hpp"

#include <cctype>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {
namespace {

constexpr Epilogue kAllEpilogues[] = {
    Epilogue::DEFAULT,  Epilogue::BIAS,          Epilogue::RELU,   Epilogue::RELU_BIAS,
    Epilogue::RELU_AUX, Epilogue::RELU_AUX_BIAS, Epilogue::GELU,   Epilogue::GELU_BIAS,
    Epilogue::GELU_AUX, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU,  Epilogue::DGELU_BGRAD,
    Epilogue::DRELU,    Epilogue::DRELU_BGRAD,   Epilogue::BGRADA, Epilogue::BGRADB};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

DType parse_gemm_dtype(const std::string& text) {
  if (text == "f32") return DType::f32;
  if (text == "bf16") return DType::bf16;
  if (text == "f16") return DType::f16;
  cli::usage_fail("--dtype expects f32, bf16, f16 or f16:exact|flush|alt, but got '", text, "'");
}

}  // namespace

std::string DtypeMode::name() const {
  std::string s(dtype_name(dtype));
  if (dtype == DType::f16) s += std::string(":") + fp16_mode_name(mode);
  return s;
}

const char* fp16_mode_name(Fp16Mode mode) {
  return mode == Fp16Mode::exact ? "exact" : mode == Fp16Mode::flush ? "flush" : "alt";
}

std::vector<DtypeMode> parse_dtype_modes(const std::string& text) {
  std::vector<DtypeMode> out;
  for (const std::string& item : cli::split_list(text)) {
    const std::size_t colon = item.find(':');
    const DType t = parse_gemm_dtype(item.substr(0, colon));
    if (colon == std::string::npos) {
      if (t == DType::f16)
        for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) out.push_back({t, m});
      else
        out.push_back({t, Fp16Mode::exact});
      continue;
    }
    const std::string mode = item.substr(colon + 1);
    if (t != DType::f16) cli::usage_fail("--dtype: only f16 takes a mode, but got '", item, "'");
    if (mode == "exact")
      out.push_back({t, Fp16Mode::exact});
    else if (mode == "flush")
      out.push_back({t, Fp16Mode::flush});
    else if (mode == "alt")
      out.push_back({t, Fp16Mode::alt});
    else
      cli::usage_fail("--dtype: fp16 mode must be exact, flush or alt, but got '", mode, "'");
  }
  if (out.empty()) cli::usage_fail("--dtype expects at least one dtype, but got '", text, "'");
  return out;
}

std::vector<Epilogue> parse_epilogues(const std::string& text) {
  std::vector<Epilogue> out;
  for (const std::string& item : cli::split_list(text)) {
    bool found = false;
    for (Epilogue e : kAllEpilogues)
      if (upper(item) == ampkit::epilogue_name(e)) {
        out.push_back(e);
        found = true;
      }
    if (!found)
      cli::usage_fail("--epilogue: unknown epilogue '", item,
                      "' (e.g. DEFAULT, BIAS, GELU_AUX_BIAS, DGELU_BGRAD, BGRADB)");
  }
  if (out.empty()) cli::usage_fail("--epilogue expects at least one name, but got '", text, "'");
  return out;
}

bool epilogue_reads_bias(Epilogue e) {
  return e == Epilogue::BIAS || e == Epilogue::RELU_BIAS || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_BIAS ||
         e == Epilogue::GELU_AUX_BIAS;
}

bool epilogue_writes_bias_grad(Epilogue e) {
  return e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD || e == Epilogue::BGRADA || e == Epilogue::BGRADB;
}

bool epilogue_uses_aux(Epilogue e) {
  return e == Epilogue::RELU_AUX || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_AUX ||
         e == Epilogue::GELU_AUX_BIAS || e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU ||
         e == Epilogue::DRELU_BGRAD;
}

bool epilogue_reads_aux(Epilogue e) {
  return e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU || e == Epilogue::DRELU_BGRAD;
}

std::vector<std::array<std::int64_t, 3>> parse_triples(const std::string& text, const char* form) {
  std::vector<std::array<std::int64_t, 3>> out;
  for (const std::string& item : cli::split_list(text)) {
    const std::vector<std::string> parts = cli::split_list(item, 'x');
    if (parts.size() != 3) cli::usage_fail("--shapes expects ", form, " items, but got '", item, "'");
    std::array<std::int64_t, 3> t{};
    for (int i = 0; i < 3; ++i) t[i] = cli::parse_int(parts[i], "--shapes", 1, 1 << 20);
    out.push_back(t);
  }
  if (out.empty()) cli::usage_fail("--shapes expects a list of ", form, ", but got '", text, "'");
  return out;
}

RunSettings make_run_settings(const CommonOptions& common, const std::optional<std::string>& peers) {
  RunSettings s;
  const bool quick = common.quick;
  s.threads = common.threads;
  if (s.threads.empty()) s.threads = quick ? std::vector<int>{1} : std::vector<int>{1, 2};
  const std::string peers_text = peers.value_or("openblas,onednn,torch");
  if (peers_text != "none") s.peers = cli::split_list(peers_text);
  for (const std::string& p : s.peers)
    if (p != "openblas" && p != "onednn" && p != "torch")
      cli::usage_fail("--peers: unknown peer '", p, "' (openblas, onednn, torch, none)");
  s.measure.min_samples = common.reps ? static_cast<int>(*common.reps) : (quick ? 3 : 5);
  s.measure.min_total_ms = quick ? 30.0 : 200.0;
  s.measure.warmup_calls = quick ? 1 : 2;
  return s;
}

double gemm_gflops(const PeerShape& s, double ms) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (ms * 1e6);
}

}  // namespace ampkit::tools::bench
