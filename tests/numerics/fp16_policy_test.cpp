// Tests of the fp16 policy without GEMM calls: the pure parsers and the resolution rule, the
// DESIGN.md table through the environment (set/unset in-process, re-read with the test hook),
// API choices beating the environment, the BackwardPassGuard (nesting, exceptions, thread
// locality, OpenMP workers) and the process-wide counters.
#include <omp.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "numerics/policy_test_support.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::kConvEnv;
using testing::kGemmEnv;
using testing::kModelEnv;
using testing::PolicyEnvScope;

// The expected mode, written out from DESIGN.md's table (independent of resolve_fp16_mode).
Fp16Mode table_mode(AltImplChoice choice, bool backward, Fp16DeviceModel model) {
  const Fp16Mode original = model == Fp16DeviceModel::cpu ? Fp16Mode::exact : Fp16Mode::flush;
  if (choice == AltImplChoice::per_pass) return backward ? Fp16Mode::alt : original;
  if (choice == AltImplChoice::original) return original;
  return Fp16Mode::alt;
}

// Message of the Error that f() throws ("" and a test failure if it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an ampkit::Error";
  return "";
}

TEST(Fp16Policy, AltImplEnvParsing) {
  EXPECT_EQ(parse_alt_impl_env(kGemmEnv, nullptr), AltImplChoice::per_pass);
  EXPECT_EQ(parse_alt_impl_env(kGemmEnv, ""), AltImplChoice::per_pass);
  for (const char* zero : {"0", "00", "-0", "+0", "000000000000000000000000"})
    EXPECT_EQ(parse_alt_impl_env(kGemmEnv, zero), AltImplChoice::original) << zero;
  for (const char* other : {"1", "2", "-1", "+7", "10", "0001", "123456789012345678901234567890"})
    EXPECT_EQ(parse_alt_impl_env(kGemmEnv, other), AltImplChoice::alternate) << other;
  for (const char* bad : {"yes", "true", "on", "1.0", "0.0", " 1", "1 ", "0x1", "+", "-", "1e3", "- 1", "1_000"}) {
    const std::string message = error_of([&] { parse_alt_impl_env(kConvEnv, bad); });
    EXPECT_NE(message.find(kConvEnv), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("expected an integer"), std::string::npos) << message;
  }
}

TEST(Fp16Policy, NamesAndCliParsing) {
  EXPECT_EQ(parse_fp16_device_model("cpu", "--fp16-model"), Fp16DeviceModel::cpu);
  EXPECT_EQ(parse_fp16_device_model("mi200", "--fp16-model"), Fp16DeviceModel::mi200);
  for (Fp16DeviceModel m : {Fp16DeviceModel::cpu, Fp16DeviceModel::mi200})
    EXPECT_EQ(parse_fp16_device_model(fp16_device_model_name(m), "x"), m);
  for (AltImplChoice c : {AltImplChoice::per_pass, AltImplChoice::original, AltImplChoice::alternate})
    EXPECT_EQ(parse_alt_impl_choice(alt_impl_choice_name(c), "x"), c);
  EXPECT_EQ(parse_alt_impl_choice("per_pass", "x"), AltImplChoice::per_pass);
  EXPECT_EQ(fp16_mode_name(Fp16Mode::exact), "exact");
  EXPECT_EQ(fp16_mode_name(Fp16Mode::flush), "flush");
  EXPECT_EQ(fp16_mode_name(Fp16Mode::alt), "alt");
  EXPECT_EQ(error_of([] { parse_fp16_device_model("MI200", "--fp16-model"); }),
            "--fp16-model: expected one of cpu, mi200, but got 'MI200'");
  EXPECT_EQ(error_of([] { parse_alt_impl_choice("1", "--fp16-alt-impl"); }),
            "--fp16-alt-impl: expected one of per-pass, original, alternate, but got '1'");
  EXPECT_EQ(parse_fp16_device_model_env(nullptr), Fp16DeviceModel::cpu);
  EXPECT_EQ(parse_fp16_device_model_env(""), Fp16DeviceModel::cpu);
  EXPECT_EQ(parse_fp16_device_model_env("mi200"), Fp16DeviceModel::mi200);
  EXPECT_EQ(error_of([] { parse_fp16_device_model_env("gfx90a"); }),
            "AMPKIT_FP16_MODEL: expected one of cpu, mi200, but got 'gfx90a'");
}

TEST(Fp16Policy, ResolutionRuleIsTheDesignTable) {
  // Spelled out once more as literal rows, so a mistake in table_mode cannot hide one here.
  using C = AltImplChoice;
  using D = Fp16DeviceModel;
  using M = Fp16Mode;
  EXPECT_EQ(resolve_fp16_mode(C::per_pass, false, D::cpu), M::exact);
  EXPECT_EQ(resolve_fp16_mode(C::per_pass, true, D::cpu), M::alt);
  EXPECT_EQ(resolve_fp16_mode(C::per_pass, false, D::mi200), M::flush);
  EXPECT_EQ(resolve_fp16_mode(C::per_pass, true, D::mi200), M::alt);
  EXPECT_EQ(resolve_fp16_mode(C::original, false, D::cpu), M::exact);
  EXPECT_EQ(resolve_fp16_mode(C::original, true, D::cpu), M::exact);
  EXPECT_EQ(resolve_fp16_mode(C::original, false, D::mi200), M::flush);
  EXPECT_EQ(resolve_fp16_mode(C::original, true, D::mi200), M::flush);
  for (D d : {D::cpu, D::mi200})
    for (bool backward : {false, true}) EXPECT_EQ(resolve_fp16_mode(C::alternate, backward, d), M::alt);
  EXPECT_THROW(resolve_fp16_mode(static_cast<C>(7), false, D::cpu), Error);
}

// The whole table through the environment: every alt-impl value x device model (env and API) x
// pass, for GEMM and convolution, each variable affecting only its own operation.
TEST(Fp16Policy, EnvironmentTable) {
  PolicyEnvScope scope;
  struct EnvCase {
    const char* value;
    AltImplChoice choice;
  };
  const EnvCase cases[] = {{nullptr, AltImplChoice::per_pass}, {"", AltImplChoice::per_pass},
                           {"1", AltImplChoice::alternate},    {"0", AltImplChoice::original},
                           {"2", AltImplChoice::alternate},    {"-3", AltImplChoice::alternate}};
  const char* models[] = {nullptr, "cpu", "mi200"};
  for (const EnvCase& g : cases) {
    for (const EnvCase& c : cases) {
      for (const char* model_env : models) {
        PolicyEnvScope::set(kGemmEnv, g.value);
        PolicyEnvScope::set(kConvEnv, c.value);
        PolicyEnvScope::set(kModelEnv, model_env);
        const Fp16DeviceModel model =
            model_env && std::string(model_env) == "mi200" ? Fp16DeviceModel::mi200 : Fp16DeviceModel::cpu;
        SCOPED_TRACE(::testing::Message() << kGemmEnv << "=" << (g.value ? g.value : "(unset)") << " " << kConvEnv
                                          << "=" << (c.value ? c.value : "(unset)") << " " << kModelEnv << "="
                                          << (model_env ? model_env : "(unset)"));
        EXPECT_EQ(fp16_device_model(), model);
        EXPECT_EQ(original_fp16_mode(), table_mode(AltImplChoice::original, false, model));
        EXPECT_EQ(gemm_fp16_alt_impl(), g.choice);
        EXPECT_EQ(conv_fp16_alt_impl(), c.choice);
        EXPECT_FALSE(in_backward_pass());
        EXPECT_EQ(gemm_fp16_mode(), table_mode(g.choice, false, model));
        EXPECT_EQ(conv_fp16_mode(), table_mode(c.choice, false, model));
        {
          BackwardPassGuard backward;
          EXPECT_EQ(gemm_fp16_mode(), table_mode(g.choice, true, model));
          EXPECT_EQ(conv_fp16_mode(), table_mode(c.choice, true, model));
        }
        // The API device model gives the same rows as the environment's.
        for (Fp16DeviceModel api_model : {Fp16DeviceModel::cpu, Fp16DeviceModel::mi200}) {
          set_fp16_device_model(api_model);
          EXPECT_EQ(gemm_fp16_mode(), table_mode(g.choice, false, api_model));
          BackwardPassGuard backward;
          EXPECT_EQ(gemm_fp16_mode(), table_mode(g.choice, true, api_model));
          EXPECT_EQ(conv_fp16_mode(), table_mode(c.choice, true, api_model));
        }
        clear_fp16_device_model();
      }
    }
  }
}

TEST(Fp16Policy, EnvironmentIsReadOncePerProcess) {
  PolicyEnvScope scope;
  PolicyEnvScope::set(kGemmEnv, "1");
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  setenv(kGemmEnv, "0", 1);  // without the test hook: not seen
  setenv(kModelEnv, "mi200", 1);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  EXPECT_EQ(fp16_device_model(), Fp16DeviceModel::cpu);
  detail::reload_environment_for_testing();
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::flush);
  EXPECT_EQ(fp16_device_model(), Fp16DeviceModel::mi200);
}

TEST(Fp16Policy, InvalidEnvironmentIsAClearErrorAtEveryUse) {
  PolicyEnvScope scope;
  PolicyEnvScope::set(kGemmEnv, "yes");
  for (int use = 0; use < 2; ++use) {  // not only the first use: never silently ignored
    const std::string message = error_of([] { gemm_fp16_mode(); });
    EXPECT_NE(message.find("ROCBLAS_INTERNAL_FP16_ALT_IMPL"), std::string::npos) << message;
    EXPECT_NE(message.find("'yes'"), std::string::npos) << message;
    EXPECT_THROW(gemm_fp16_alt_impl(), Error);
  }
  // The convolution resolver does not depend on the GEMM variable, and vice versa.
  EXPECT_EQ(conv_fp16_mode(), Fp16Mode::exact);
  PolicyEnvScope::set(kGemmEnv, nullptr);
  PolicyEnvScope::set(kConvEnv, "1.5");
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::exact);
  {
    const std::string message = error_of([] { conv_fp16_mode(); });
    EXPECT_NE(message.find(kConvEnv), std::string::npos) << message;
    EXPECT_NE(message.find("'1.5'"), std::string::npos) << message;
  }
  // An invalid device model breaks both resolvers, whatever the alt-impl choice is.
  PolicyEnvScope::set(kConvEnv, nullptr);
  PolicyEnvScope::set(kGemmEnv, "1");
  PolicyEnvScope::set(kModelEnv, "MI200");
  for (auto resolve : {gemm_fp16_mode, conv_fp16_mode, original_fp16_mode}) {
    const std::string message = error_of([&] { resolve(); });
    EXPECT_EQ(message, "AMPKIT_FP16_MODEL: expected one of cpu, mi200, but got 'MI200'");
  }
  // Fixing the environment (and re-reading it) fixes the calls.
  PolicyEnvScope::set(kModelEnv, "mi200");
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  EXPECT_EQ(conv_fp16_mode(), Fp16Mode::flush);
}

TEST(Fp16Policy, OnlyFp16GemmsConsultThePolicy) {
  PolicyEnvScope scope;
  EXPECT_TRUE(is_fp16_gemm({DType::bf16, DType::f16}));
  EXPECT_FALSE(is_fp16_gemm({DType::f32, DType::bf16, DType::f32}));
  {
    BackwardPassGuard backward;
    EXPECT_EQ(gemm_fp16_mode_for({DType::f16, DType::f32}), kDefaultBackwardFp16Mode);
    EXPECT_EQ(gemm_fp16_mode_for({DType::bf16, DType::bf16}), Fp16Mode::exact);
  }
  EXPECT_EQ(gemm_fp16_mode_for({DType::f16, DType::f16}), Fp16Mode::exact);
  // An invalid environment breaks fp16 GEMMs only: the others never read it.
  PolicyEnvScope::set(kGemmEnv, "yes");
  EXPECT_THROW(gemm_fp16_mode_for({DType::f32, DType::f16}), Error);
  EXPECT_EQ(gemm_fp16_mode_for({DType::f32, DType::bf16}), Fp16Mode::exact);
}

TEST(Fp16Policy, ApiChoiceBeatsTheEnvironment) {
  PolicyEnvScope scope;
  PolicyEnvScope::set(kGemmEnv, "1");
  PolicyEnvScope::set(kConvEnv, "0");
  PolicyEnvScope::set(kModelEnv, "mi200");
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  EXPECT_EQ(gemm_fp16_alt_impl(), AltImplChoice::original);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::flush);
  set_fp16_device_model(Fp16DeviceModel::cpu);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::exact);
  set_gemm_fp16_alt_impl(AltImplChoice::per_pass);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::exact);
  {
    BackwardPassGuard backward;
    EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
    EXPECT_EQ(conv_fp16_mode(), Fp16Mode::exact);  // env "0": original everywhere
    set_conv_fp16_alt_impl(AltImplChoice::alternate);
    EXPECT_EQ(conv_fp16_mode(), Fp16Mode::alt);
    EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);  // each operation has its own choice
  }
  set_conv_fp16_alt_impl(AltImplChoice::alternate);
  EXPECT_EQ(conv_fp16_mode(), Fp16Mode::alt);
  // Clearing goes back to the environment.
  clear_gemm_fp16_alt_impl();
  clear_conv_fp16_alt_impl();
  clear_fp16_device_model();
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  EXPECT_EQ(conv_fp16_mode(), Fp16Mode::flush);
  // An explicit choice makes an invalid variable irrelevant (the API wins; the variable is not
  // consulted), and clearing the choice brings the error back.
  PolicyEnvScope::set(kGemmEnv, "maybe");
  PolicyEnvScope::set(kModelEnv, "tpu");
  EXPECT_THROW(gemm_fp16_mode(), Error);
  set_gemm_fp16_alt_impl(AltImplChoice::alternate);
  EXPECT_THROW(gemm_fp16_mode(), Error);  // the device model still comes from a bad variable
  set_fp16_device_model(Fp16DeviceModel::mi200);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  clear_gemm_fp16_alt_impl();
  EXPECT_THROW(gemm_fp16_mode(), Error);
  // Invalid enumerators are rejected and change nothing.
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  EXPECT_THROW(set_gemm_fp16_alt_impl(static_cast<AltImplChoice>(3)), Error);
  EXPECT_THROW(set_conv_fp16_alt_impl(static_cast<AltImplChoice>(200)), Error);
  EXPECT_THROW(set_fp16_device_model(static_cast<Fp16DeviceModel>(2)), Error);
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::flush);
  EXPECT_EQ(error_of([] { set_gemm_fp16_alt_impl(static_cast<AltImplChoice>(3)); }),
            "set_gemm_fp16_alt_impl: choice must be per_pass, original or alternate, but got the "
            "value 3");
}

TEST(Fp16Policy, GuardNestsAndRestores) {
  static_assert(!std::is_copy_constructible_v<BackwardPassGuard>);
  static_assert(!std::is_copy_assignable_v<BackwardPassGuard>);
  static_assert(!std::is_move_constructible_v<BackwardPassGuard>);
  static_assert(!std::is_convertible_v<bool, BackwardPassGuard>);  // explicit
  EXPECT_FALSE(in_backward_pass());
  {
    BackwardPassGuard outer;
    EXPECT_TRUE(in_backward_pass());
    {
      BackwardPassGuard forward(false);  // e.g. a recomputed forward inside the backward pass
      EXPECT_FALSE(in_backward_pass());
      {
        BackwardPassGuard inner;
        EXPECT_TRUE(in_backward_pass());
      }
      EXPECT_FALSE(in_backward_pass());
    }
    EXPECT_TRUE(in_backward_pass());
    {
      BackwardPassGuard again;
      EXPECT_TRUE(in_backward_pass());
    }
    EXPECT_TRUE(in_backward_pass());  // an inner guard restores "backward", not "forward"
  }
  EXPECT_FALSE(in_backward_pass());
  {
    BackwardPassGuard forward(false);
    EXPECT_FALSE(in_backward_pass());
  }
  EXPECT_FALSE(in_backward_pass());
}

TEST(Fp16Policy, GuardRestoresWhenAnExceptionUnwindsThroughIt) {
  PolicyEnvScope scope;
  set_gemm_fp16_alt_impl(AltImplChoice::per_pass);
  auto backward_step_that_throws = [] {
    BackwardPassGuard guard;
    EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
    {
      BackwardPassGuard forward(false);
      throw std::runtime_error("failed in the middle of a nested guard");
    }
  };
  EXPECT_THROW(backward_step_that_throws(), std::runtime_error);
  EXPECT_FALSE(in_backward_pass());
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::exact);
  {
    BackwardPassGuard outer;
    try {
      BackwardPassGuard forward(false);
      EXPECT_FALSE(in_backward_pass());
      throw Error("x");
    } catch (const Error&) {
      EXPECT_TRUE(in_backward_pass());  // the inner guard is gone, the outer one still holds
    }
    EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  }
  EXPECT_FALSE(in_backward_pass());
}

TEST(Fp16Policy, GuardIsThreadLocal) {
  BackwardPassGuard guard;
  bool other_thread_backward = true;
  std::thread other([&] { other_thread_backward = in_backward_pass(); });
  other.join();
  EXPECT_FALSE(other_thread_backward);
  EXPECT_TRUE(in_backward_pass());
}

// Inside an OpenMP region started under a guard, the workers are not in the backward pass (the
// state is thread_local): a mode resolved on a worker would be the forward one. This is why the
// mode is resolved once on the calling thread and passed down.
TEST(Fp16Policy, OpenMpWorkersDoNotSeeTheCallersGuard) {
  PolicyEnvScope scope;
  set_gemm_fp16_alt_impl(AltImplChoice::per_pass);
  set_fp16_device_model(Fp16DeviceModel::mi200);
  BackwardPassGuard guard;
  const Fp16Mode caller_mode = gemm_fp16_mode();
  EXPECT_EQ(caller_mode, Fp16Mode::alt);
  std::vector<int> backward(2, -1), worker_mode(2, -1), handed_down(2, -1);
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    backward[static_cast<std::size_t>(t)] = in_backward_pass() ? 1 : 0;
    worker_mode[static_cast<std::size_t>(t)] = static_cast<int>(gemm_fp16_mode());
    handed_down[static_cast<std::size_t>(t)] = static_cast<int>(caller_mode);
  }
  if (team < 2) GTEST_SKIP() << "OpenMP gave a team of " << team << " thread(s)";
  EXPECT_EQ(backward[0], 1);                                     // the caller is the team's thread 0
  EXPECT_EQ(backward[1], 0);                                     // a worker does not see the guard
  EXPECT_EQ(worker_mode[1], static_cast<int>(Fp16Mode::flush));  // would resolve the wrong mode
  EXPECT_EQ(handed_down[0], static_cast<int>(Fp16Mode::alt));
  EXPECT_EQ(handed_down[1], static_cast<int>(Fp16Mode::alt));  // the handed-down one is right
}

TEST(Fp16Policy, CountersAccumulateReports) {
  reset_fp16_counters();
  const Fp16Counters zero = fp16_counters();
  EXPECT_EQ(zero.gemm_calls(), 0);
  GemmReport r;
  r.fp16 = true;
  r.fp16_mode = Fp16Mode::flush;
  r.fp16_subnormal_inputs = 5;
  r.fp16_subnormal_outputs = 2;
  add_fp16_gemm_report(r);
  add_fp16_gemm_report(r);
  r.fp16_mode = Fp16Mode::alt;
  r.fp16_subnormal_inputs = 7;
  r.fp16_subnormal_outputs = 1;
  add_fp16_gemm_report(r);
  r.fp16_mode = Fp16Mode::exact;
  r.fp16_subnormal_inputs = 11;
  r.fp16_subnormal_outputs = 3;
  add_fp16_gemm_report(r);
  GemmReport not_fp16;  // ignored: the policy only concerns fp16 operands
  not_fp16.fp16_subnormal_inputs = 100;
  add_fp16_gemm_report(not_fp16);
  GemmReport bad = r;
  bad.fp16_subnormal_inputs = -1;
  EXPECT_THROW(add_fp16_gemm_report(bad), Error);
  bad = r;
  bad.fp16_mode = static_cast<Fp16Mode>(9);
  EXPECT_THROW(add_fp16_gemm_report(bad), Error);

  const Fp16Counters c = fp16_counters();
  EXPECT_EQ(c.flush.gemm_calls, 2);
  EXPECT_EQ(c.flush.subnormal_inputs, 10);
  EXPECT_EQ(c.flush.subnormal_outputs, 4);
  EXPECT_EQ(c.alt.gemm_calls, 1);
  EXPECT_EQ(c.exact.gemm_calls, 1);
  EXPECT_EQ(c[Fp16Mode::alt].subnormal_inputs, 7);
  EXPECT_EQ(c[Fp16Mode::exact].subnormal_outputs, 3);
  EXPECT_EQ(c.gemm_calls(), 4);
  EXPECT_EQ(c.subnormal_inputs_flushed(), 10);
  EXPECT_EQ(c.subnormal_inputs_would_flush(), 18);
  EXPECT_EQ(c.subnormal_outputs_flushed(), 4);
  EXPECT_EQ(c.subnormal_outputs_would_flush(), 4);
  reset_fp16_counters();
  EXPECT_EQ(fp16_counters().gemm_calls(), 0);
  EXPECT_EQ(fp16_counters().subnormal_inputs_would_flush(), 0);
}

TEST(Fp16Policy, CountersAreExactUnderConcurrentAdds) {
  reset_fp16_counters();
  constexpr int kAdds = 20000;
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < kAdds; ++i) {
    GemmReport r;
    r.fp16 = true;
    r.fp16_mode = static_cast<Fp16Mode>(i % 3);
    r.fp16_subnormal_inputs = i % 5;
    r.fp16_subnormal_outputs = 1;
    add_fp16_gemm_report(r);
  }
  std::int64_t inputs[3] = {0, 0, 0}, calls[3] = {0, 0, 0};
  for (int i = 0; i < kAdds; ++i) {
    inputs[i % 3] += i % 5;
    calls[i % 3] += 1;
  }
  const Fp16Counters c = fp16_counters();
  for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
    EXPECT_EQ(c[m].gemm_calls, calls[static_cast<int>(m)]);
    EXPECT_EQ(c[m].subnormal_inputs, inputs[static_cast<int>(m)]);
    EXPECT_EQ(c[m].subnormal_outputs, calls[static_cast<int>(m)]);
  }
  reset_fp16_counters();
}

}  // namespace
}  // namespace ampkit
