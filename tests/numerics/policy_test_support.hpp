// Helpers of the fp16-policy tests: setting/unsetting the policy's environment variables for one
// test and restoring the process's values (and a clean policy state) afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "ampkit/numerics/fp16_policy.hpp"
#include "numerics/fp16_policy_testing.hpp"

namespace ampkit::testing {

inline constexpr const char* kModelEnv = "AMPKIT_FP16_MODEL";
inline constexpr const char* kGemmEnv = "ROCBLAS_INTERNAL_FP16_ALT_IMPL";
inline constexpr const char* kConvEnv = "MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL";

/// For the scope: no API choices and the three variables unset (then as the test sets them); on
/// exit the process's values are put back, API choices cleared and the environment re-read.
class PolicyEnvScope {
 public:
  PolicyEnvScope() : model_(get(kModelEnv)), gemm_(get(kGemmEnv)), conv_(get(kConvEnv)) {
    clear_api_choices();
    put(kModelEnv, std::nullopt);
    put(kGemmEnv, std::nullopt);
    put(kConvEnv, std::nullopt);
    detail::reload_environment_for_testing();
  }
  ~PolicyEnvScope() {
    put(kModelEnv, model_);
    put(kGemmEnv, gemm_);
    put(kConvEnv, conv_);
    clear_api_choices();
    detail::reload_environment_for_testing();
  }
  PolicyEnvScope(const PolicyEnvScope&) = delete;
  PolicyEnvScope& operator=(const PolicyEnvScope&) = delete;

  /// Sets (value non-null) or unsets (null) `variable` and makes the policy re-read the
  /// environment.
  static void set(const char* variable, const char* value) {
    put(variable, value ? std::optional<std::string>(value) : std::nullopt);
    detail::reload_environment_for_testing();
  }

 private:
  static std::optional<std::string> get(const char* variable) {
    const char* v = std::getenv(variable);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  static void put(const char* variable, const std::optional<std::string>& value) {
    if (value)
      setenv(variable, value->c_str(), 1);
    else
      unsetenv(variable);
  }
  static void clear_api_choices() {
    clear_fp16_device_model();
    clear_gemm_fp16_alt_impl();
    clear_conv_fp16_alt_impl();
  }

  std::optional<std::string> model_, gemm_, conv_;
};

}  // namespace ampkit::testing
