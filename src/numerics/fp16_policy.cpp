// The fp16 numerics policy (numerics layer): parsing of the environment variables and CLI
// spellings, the process-wide API choices, the cached environment, the thread_local
// backward-pass state and the resolution of a GEMM/convolution Fp16Mode on the calling thread.
// Called by gemm_with_policy, the layers, the graph executor and the CLI; kernels never call it.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "numerics/fp16_policy_testing.hpp"

namespace ampkit {
namespace {

constexpr const char* kModelVariable = "AMPKIT_FP16_MODEL";
constexpr const char* kGemmVariable = "ROCBLAS_INTERNAL_FP16_ALT_IMPL";
constexpr const char* kConvVariable = "MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL";

// One environment variable read once: its parsed value, or the message of the Error its value
// causes (thrown again at every use, so an invalid setting is never silently ignored).
template <typename T>
struct EnvSetting {
  T value{};
  std::string error;  // empty when the value is valid
};

struct Environment {
  EnvSetting<Fp16DeviceModel> model;
  EnvSetting<AltImplChoice> gemm;
  EnvSetting<AltImplChoice> conv;
};

template <typename T, typename Parse>
EnvSetting<T> read_setting(const char* variable, Parse parse) {
  EnvSetting<T> setting;
  try {
    setting.value = parse(std::getenv(variable));
  } catch (const Error& e) {
    setting.error = e.what();
  }
  return setting;
}

Environment read_environment() {
  Environment env;
  env.model = read_setting<Fp16DeviceModel>(kModelVariable, parse_fp16_device_model_env);
  env.gemm =
      read_setting<AltImplChoice>(kGemmVariable, [](const char* v) { return parse_alt_impl_env(kGemmVariable, v); });
  env.conv =
      read_setting<AltImplChoice>(kConvVariable, [](const char* v) { return parse_alt_impl_env(kConvVariable, v); });
  return env;
}

// The cached environment: read at the first use, re-read only by the test hook.
std::mutex g_env_mutex;
bool g_env_loaded = false;
Environment g_env;

const Environment& environment() {
  std::lock_guard<std::mutex> lock(g_env_mutex);
  if (!g_env_loaded) {
    g_env = read_environment();
    g_env_loaded = true;
  }
  return g_env;
}

template <typename T>
T setting_value(const EnvSetting<T>& setting) {
  if (!setting.error.empty()) throw Error(setting.error);
  return setting.value;
}

// API choices: -1 = none (the environment decides), else the enumerator's value.
std::atomic<int> g_model_choice{-1};
std::atomic<int> g_gemm_choice{-1};
std::atomic<int> g_conv_choice{-1};

thread_local bool t_backward = false;

bool valid_choice(AltImplChoice c) {
  return c == AltImplChoice::per_pass || c == AltImplChoice::original || c == AltImplChoice::alternate;
}

void store_choice(std::atomic<int>& slot, AltImplChoice choice, const char* function) {
  if (!valid_choice(choice))
    fail(function, "choice must be per_pass, original or alternate, but got the value ", static_cast<int>(choice));
  slot.store(static_cast<int>(choice), std::memory_order_release);
}

}  // namespace

std::string_view fp16_mode_name(Fp16Mode mode) {
  switch (mode) {
    case Fp16Mode::exact: return "exact";
    case Fp16Mode::flush: return "flush";
    case Fp16Mode::alt: return "alt";
  }
  return "?";
}

std::string_view fp16_device_model_name(Fp16DeviceModel model) {
  switch (model) {
    case Fp16DeviceModel::cpu: return "cpu";
    case Fp16DeviceModel::mi200: return "mi200";
  }
  return "?";
}

std::string_view alt_impl_choice_name(AltImplChoice choice) {
  switch (choice) {
    case AltImplChoice::per_pass: return "per-pass";
    case AltImplChoice::original: return "original";
    case AltImplChoice::alternate: return "alternate";
  }
  return "?";
}

Fp16DeviceModel parse_fp16_device_model(std::string_view text, const char* what) {
  if (text == "cpu") return Fp16DeviceModel::cpu;
  if (text == "mi200") return Fp16DeviceModel::mi200;
  fail(what, "expected one of cpu, mi200, but got '", std::string(text), "'");
}

AltImplChoice parse_alt_impl_choice(std::string_view text, const char* what) {
  if (text == "per-pass" || text == "per_pass") return AltImplChoice::per_pass;
  if (text == "original") return AltImplChoice::original;
  if (text == "alternate") return AltImplChoice::alternate;
  fail(what, "expected one of per-pass, original, alternate, but got '", std::string(text), "'");
}

AltImplChoice parse_alt_impl_env(const char* variable, const char* value) {
  if (value == nullptr || *value == '\0') return AltImplChoice::per_pass;
  // An integer: optional sign, then one or more decimal digits, nothing else. Its value only
  // matters as zero / non-zero, so any length is accepted (no overflow to worry about).
  const std::string_view text(value);
  std::size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  bool digits = i < text.size(), zero = true;
  for (; i < text.size() && digits; ++i) {
    if (text[i] < '0' || text[i] > '9')
      digits = false;
    else if (text[i] != '0')
      zero = false;
  }
  if (!digits)
    fail(variable,
         "expected an integer (0: original fp16 implementation in both passes; any other "
         "integer: alternate implementation in both passes; unset or empty: original forward, "
         "alternate backward), but got '",
         value, "'");
  return zero ? AltImplChoice::original : AltImplChoice::alternate;
}

Fp16DeviceModel parse_fp16_device_model_env(const char* value) {
  if (value == nullptr || *value == '\0') return Fp16DeviceModel::cpu;
  return parse_fp16_device_model(value, kModelVariable);
}

Fp16Mode resolve_fp16_mode(AltImplChoice choice, bool backward, Fp16DeviceModel model) {
  if (model != Fp16DeviceModel::cpu && model != Fp16DeviceModel::mi200)
    fail("resolve_fp16_mode", "model must be cpu or mi200, but got the value ", static_cast<int>(model));
  const Fp16Mode original = model == Fp16DeviceModel::mi200 ? Fp16Mode::flush : Fp16Mode::exact;
  switch (choice) {
    case AltImplChoice::alternate: return Fp16Mode::alt;
    case AltImplChoice::original: return original;
    case AltImplChoice::per_pass: return backward ? kDefaultBackwardFp16Mode : original;
  }
  fail("resolve_fp16_mode", "choice must be per_pass, original or alternate, but got the value ",
       static_cast<int>(choice));
}

void set_fp16_device_model(Fp16DeviceModel model) {
  if (model != Fp16DeviceModel::cpu && model != Fp16DeviceModel::mi200)
    fail("set_fp16_device_model", "model must be cpu or mi200, but got the value ", static_cast<int>(model));
  g_model_choice.store(static_cast<int>(model), std::memory_order_release);
}

void clear_fp16_device_model() { g_model_choice.store(-1, std::memory_order_release); }

Fp16DeviceModel fp16_device_model() {
  const int choice = g_model_choice.load(std::memory_order_acquire);
  if (choice >= 0) return static_cast<Fp16DeviceModel>(choice);
  return setting_value(environment().model);
}

Fp16Mode original_fp16_mode() { return resolve_fp16_mode(AltImplChoice::original, false, fp16_device_model()); }

void set_gemm_fp16_alt_impl(AltImplChoice choice) { store_choice(g_gemm_choice, choice, "set_gemm_fp16_alt_impl"); }

void clear_gemm_fp16_alt_impl() { g_gemm_choice.store(-1, std::memory_order_release); }

AltImplChoice gemm_fp16_alt_impl() {
  const int choice = g_gemm_choice.load(std::memory_order_acquire);
  if (choice >= 0) return static_cast<AltImplChoice>(choice);
  return setting_value(environment().gemm);
}

void set_conv_fp16_alt_impl(AltImplChoice choice) { store_choice(g_conv_choice, choice, "set_conv_fp16_alt_impl"); }

void clear_conv_fp16_alt_impl() { g_conv_choice.store(-1, std::memory_order_release); }

AltImplChoice conv_fp16_alt_impl() {
  const int choice = g_conv_choice.load(std::memory_order_acquire);
  if (choice >= 0) return static_cast<AltImplChoice>(choice);
  return setting_value(environment().conv);
}

BackwardPassGuard::BackwardPassGuard(bool backward) : previous_(t_backward) { t_backward = backward; }

BackwardPassGuard::~BackwardPassGuard() { t_backward = previous_; }

bool in_backward_pass() { return t_backward; }

// Both resolvers validate the device model even when the choice does not need it, so an invalid
// AMPKIT_FP16_MODEL fails at the first fp16 call whatever the other settings are.
Fp16Mode gemm_fp16_mode() {
  const Fp16DeviceModel model = fp16_device_model();
  return resolve_fp16_mode(gemm_fp16_alt_impl(), in_backward_pass(), model);
}

Fp16Mode gemm_fp16_mode_for(std::initializer_list<DType> operands) {
  return is_fp16_gemm(operands) ? gemm_fp16_mode() : Fp16Mode::exact;
}

Fp16Mode conv_fp16_mode() {
  const Fp16DeviceModel model = fp16_device_model();
  return resolve_fp16_mode(conv_fp16_alt_impl(), in_backward_pass(), model);
}

namespace detail {
void reload_environment_for_testing() {
  std::lock_guard<std::mutex> lock(g_env_mutex);
  g_env_loaded = false;
}
}  // namespace detail

}  // namespace ampkit
