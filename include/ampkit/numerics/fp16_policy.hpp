// The fp16 numerics policy (numerics layer, DESIGN.md section 5): which Fp16Mode an fp16 GEMM
// (or convolution) uses, from the device model, the pass (BackwardPassGuard), the environment
// (ROCBLAS_INTERNAL_FP16_ALT_IMPL, MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL,
// AMPKIT_FP16_MODEL) and explicit API choices; plus process-wide fp16 counters.
// Kernels never read this state: callers (graph executor, Linear, tools) resolve a mode on the
// calling thread and hand it down in GemmArgs::fp16_mode. See docs/NUMERICS.md.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "ampkit/ops/gemm.hpp"

namespace ampkit {

// ---------------------------------------------------------------------------------------------
// Names and parsing (pure functions; the CLI and the tests call them directly)

/// The device whose fp16 behaviour is the "original" mode: cpu -> exact, mi200 -> flush.
enum class Fp16DeviceModel : std::uint8_t { cpu, mi200 };

/// How the alternate implementation is chosen (the DESIGN.md table):
///   per_pass:  original mode in the forward pass, alt in the backward pass (env unset)
///   original:  original mode in both passes (env "0")
///   alternate: alt in both passes (env any other integer, e.g. "1")
enum class AltImplChoice : std::uint8_t { per_pass, original, alternate };

/// "exact", "flush" or "alt".
std::string_view fp16_mode_name(Fp16Mode mode);
/// "cpu" or "mi200".
std::string_view fp16_device_model_name(Fp16DeviceModel model);
/// "per-pass", "original" or "alternate".
std::string_view alt_impl_choice_name(AltImplChoice choice);

/// Parses "cpu" / "mi200" (exact spelling). Throws Error naming `what` otherwise, e.g.
/// "--fp16-model: expected one of cpu, mi200, but got 'MI200'".
Fp16DeviceModel parse_fp16_device_model(std::string_view text, const char* what);
/// Parses "per-pass" (or "per_pass") / "original" / "alternate" (CLI spelling). Throws Error
/// naming `what` otherwise.
AltImplChoice parse_alt_impl_choice(std::string_view text, const char* what);

/// Interprets the value of an alt-impl environment variable named `variable`
/// (ROCBLAS_INTERNAL_FP16_ALT_IMPL or MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL):
///   nullptr (unset) or "" (set but empty, as `VAR= command` does) -> per_pass;
///   an integer ([+-]?digits, any length, no spaces) equal to 0 -> original;
///   any other integer -> alternate;
///   anything else -> throws Error "<variable>: expected an integer ..., but got '<value>'".
AltImplChoice parse_alt_impl_env(const char* variable, const char* value);
/// Interprets the value of AMPKIT_FP16_MODEL: nullptr or "" -> cpu, "cpu", "mi200"; anything
/// else throws Error naming AMPKIT_FP16_MODEL and the value.
Fp16DeviceModel parse_fp16_device_model_env(const char* value);

/// The pure resolution rule: alternate -> alt; original -> the model's original mode;
/// per_pass -> alt when `backward`, else the original mode. Original = exact (cpu), flush (mi200).
Fp16Mode resolve_fp16_mode(AltImplChoice choice, bool backward, Fp16DeviceModel model);

/// The backward pass's mode when nothing is chosen (per_pass): alt, whatever the device model.
/// resolve_fp16_mode returns it, and LinearBackwardArgs::fp16_mode starts as it.
inline constexpr Fp16Mode kDefaultBackwardFp16Mode = Fp16Mode::alt;

// ---------------------------------------------------------------------------------------------
// Process-wide settings. Environment variables are read once per process, at the first call
// that needs them; an invalid value makes every call that needs it throw Error (naming the
// variable and the value) until it is fixed — it is never silently ignored. An explicit API
// choice wins over the environment. Setters are thread-safe (atomic) and take effect for
// modes resolved after they return.

/// Chooses the device model for this process (overrides AMPKIT_FP16_MODEL).
/// Throws Error if `model` is not a valid enumerator.
void set_fp16_device_model(Fp16DeviceModel model);
/// Forgets set_fp16_device_model: the model comes from AMPKIT_FP16_MODEL again.
void clear_fp16_device_model();
/// The device model in effect: the API choice, else AMPKIT_FP16_MODEL, else cpu.
/// Throws Error when it comes from an invalid AMPKIT_FP16_MODEL.
Fp16DeviceModel fp16_device_model();
/// The original mode of the device model in effect: exact (cpu) or flush (mi200). Throws like
/// fp16_device_model.
Fp16Mode original_fp16_mode();

/// Chooses the GEMM alt-impl behaviour (overrides ROCBLAS_INTERNAL_FP16_ALT_IMPL).
/// Throws Error if `choice` is not a valid enumerator.
void set_gemm_fp16_alt_impl(AltImplChoice choice);
/// Forgets set_gemm_fp16_alt_impl: ROCBLAS_INTERNAL_FP16_ALT_IMPL decides again.
void clear_gemm_fp16_alt_impl();
/// The GEMM choice in effect (API, else environment). Throws Error on an invalid env value.
AltImplChoice gemm_fp16_alt_impl();

/// Same three functions for convolution (MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL).
void set_conv_fp16_alt_impl(AltImplChoice choice);
void clear_conv_fp16_alt_impl();
AltImplChoice conv_fp16_alt_impl();

// ---------------------------------------------------------------------------------------------
// The pass

/// Marks the current thread as running backward work (or, with `backward` = false, forward
/// work) for the guard's lifetime, and restores the state it found when it is destroyed —
/// including when an exception unwinds through it. Nestable. The state is thread_local: OpenMP
/// worker threads do NOT inherit it, which is why modes are resolved on the calling thread
/// (gemm_fp16_mode) and handed down explicitly. Destroy a guard on the thread that created it
/// (scoped use guarantees that). Not copyable, not movable.
class BackwardPassGuard {
 public:
  explicit BackwardPassGuard(bool backward = true);
  ~BackwardPassGuard();
  BackwardPassGuard(const BackwardPassGuard&) = delete;
  BackwardPassGuard& operator=(const BackwardPassGuard&) = delete;

 private:
  bool previous_;
};

/// True while a BackwardPassGuard(true) is the innermost guard alive on this thread.
bool in_backward_pass();

// ---------------------------------------------------------------------------------------------
// Resolution (on the calling thread)

/// The Fp16Mode an fp16 GEMM issued now, on this thread, must use: the GEMM alt-impl choice
/// (API, else ROCBLAS_INTERNAL_FP16_ALT_IMPL, else per pass), the pass of this thread
/// (in_backward_pass) and the device model's original mode. Call it once per GEMM on the thread
/// that issues the GEMM, before any fan-out to worker threads, and pass the result down in
/// GemmArgs::fp16_mode: worker threads do not see the caller's BackwardPassGuard.
/// Throws Error when AMPKIT_FP16_MODEL or ROCBLAS_INTERNAL_FP16_ALT_IMPL is invalid.
Fp16Mode gemm_fp16_mode();

/// True when any of `operands` (the dtypes of a GEMM's A and B) is f16: the GEMMs the policy
/// decides a mode for. Every other GEMM runs with Fp16Mode::exact and the policy is not consulted.
inline bool is_fp16_gemm(std::initializer_list<DType> operands) {
  for (DType t : operands)
    if (t == DType::f16) return true;
  return false;
}

/// gemm_fp16_mode() for an fp16 GEMM (is_fp16_gemm(operands)), else Fp16Mode::exact without
/// reading the environment. The one rule gemm_with_policy and the graph's GEMM nodes apply.
/// Throws like gemm_fp16_mode (only for an fp16 GEMM).
Fp16Mode gemm_fp16_mode_for(std::initializer_list<DType> operands);
/// Same for convolution (MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL / set_conv_fp16_alt_impl).
Fp16Mode conv_fp16_mode();

/// Runs ampkit::gemm under the policy: when A or B is f16, sets args.fp16_mode =
/// gemm_fp16_mode() (overriding whatever the caller put there), then calls gemm and adds the
/// call's GemmReport to the process-wide fp16 counters. For f32/bf16 operands the policy is not
/// consulted (the environment is not even read) and the call is plain gemm. `report` may be null.
/// This is the entry point the graph executor and the layers use; call gemm directly to force a
/// mode. Throws whatever gemm_fp16_mode or gemm throws (outputs and counters untouched then).
void gemm_with_policy(GemmArgs args, GemmReport* report = nullptr);

// ---------------------------------------------------------------------------------------------
// Introspection: cumulative process-wide counters (atomic), the raw material of a numerics report

/// Counters of the fp16 GEMM calls made with one mode.
struct Fp16ModeCounters {
  std::int64_t gemm_calls = 0;         // fp16 GEMM calls (A or B f16) that used this mode
  std::int64_t subnormal_inputs = 0;   // fp16 subnormal elements of A and B read by them
  std::int64_t subnormal_outputs = 0;  // fp16 outputs that rounded to a subnormal
};

/// A snapshot of the counters, per mode. In flush mode the subnormals counted were flushed to
/// zero; in exact and alt mode they are the ones an MI200 (flush) would have flushed.
struct Fp16Counters {
  Fp16ModeCounters exact, flush, alt;

  const Fp16ModeCounters& operator[](Fp16Mode mode) const {
    return mode == Fp16Mode::flush ? flush : mode == Fp16Mode::alt ? alt : exact;
  }
  std::int64_t gemm_calls() const { return exact.gemm_calls + flush.gemm_calls + alt.gemm_calls; }
  std::int64_t subnormal_inputs_flushed() const { return flush.subnormal_inputs; }
  std::int64_t subnormal_inputs_would_flush() const { return exact.subnormal_inputs + alt.subnormal_inputs; }
  std::int64_t subnormal_outputs_flushed() const { return flush.subnormal_outputs; }
  std::int64_t subnormal_outputs_would_flush() const { return exact.subnormal_outputs + alt.subnormal_outputs; }
};

/// Adds one GEMM call's report to the counters (for callers that call gemm directly).
/// Reports of non-fp16 calls (report.fp16 false) are ignored. Throws Error on a report with an
/// invalid mode or negative counts (nothing added then).
void add_fp16_gemm_report(const GemmReport& report);
/// The counters now. Each field is read atomically; with concurrent GEMMs the fields of one
/// snapshot may straddle a call (counts of a quiescent process are exact).
Fp16Counters fp16_counters();
/// Sets every counter to zero.
void reset_fp16_counters();

}  // namespace ampkit
