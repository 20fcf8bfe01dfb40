// The validated problem every GEMM engine receives and the entry type of the GEMM kernel lists
// (ops layer, internal); the CPU's list is declared in src/cpu/gemm/gemm_kernels.hpp and defined in
// src/cpu/gemm/gemm_kernel_list.cpp, CUDA's in src/cuda/gemm/. Read by the front end
// (gemm_front_end.cpp: dispatch), the backends and the tests. Entries are ordered best first; the
// reference is last and takes any problem, so the list has no hole.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ops/check_stage.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// What the activation step of an epilogue does (the epilogue kind minus bias/aux/bgrad flags).
enum class GemmActivation : std::uint8_t { none, relu, gelu, drelu, dgelu };

/// Which bias gradient, if any, an epilogue writes.
enum class GemmBiasGrad : std::uint8_t { none, rows_of_d, rows_of_a, cols_of_b };

/// A GemmArgs that gemm_check accepted, with the epilogue decoded once.
struct GemmProblem {
  GemmArgs args;
  bool fp16 = false;           // A or B is f16 (the fp16 mode applies)
  bool flush = false;          // fp16 && mode == flush: f16 subnormal inputs/outputs -> 0
  bool alt = false;            // fp16 && mode == alt: f16 operands rounded to bf16
  bool use_c = false;          // beta != 0 (C is read only then)
  bool has_bias = false;       // the epilogue adds bias[row]
  bool aux_out = false;        // the epilogue stores the pre-activation into aux
  bool aux_in = false;         // the epilogue reads aux (DGELU*, DRELU*)
  bool want_counters = false;  // a GemmReport was asked for and a count can be non-zero (cuda counts only then)
  GemmActivation activation = GemmActivation::none;
  GemmBiasGrad bias_grad = GemmBiasGrad::none;
  // Block sizes a blocked CPU engine must use instead of deriving them from the caches (k
  // elements, A slivers, B slivers; 0 = derive). Only tests that run list entries directly set
  // them: the bits do not depend on them (docs/GEMM.md, "Blocking").
  std::int64_t forced_kc = 0, forced_mc = 0, forced_nc = 0;
};

/// Decodes args (already validated) into a GemmProblem (gemm_problem.cpp). The front end gets it
/// from gemm_validate; tests and kernels that build problems directly call this.
GemmProblem make_gemm_problem(const GemmArgs& args);

/// True when every backend's whole call of `problem` (GemmCallFn) is select_kernel + entry.run:
/// m >= 1, n >= 1 and not (alpha = 0 with k >= 1). The one statement of which calls the BLAS
/// rules for m = 0, n = 0 and alpha = 0 leave alone (gemm_problem.cpp).
bool gemm_runs_one_entry(const GemmProblem& problem);

/// The device of every operand (ops::device_of, src/ops/prepared_call.hpp).
inline Device device_of(const GemmProblem& problem) { return problem.args.device; }

/// Per-call counters (GemmReport's), summed over threads (integer sums: order-free).
struct GemmCounters {
  std::int64_t fp16_subnormal_inputs = 0;
  std::int64_t fp16_subnormal_outputs = 0;
};

/// Runs the whole GEMM (product, epilogue, bias gradient) for a validated problem.
using GemmRunFn = void (*)(const GemmProblem& problem, GemmCounters& counters);

/// One entry of the GEMM kernel list on the shared registry (src/ops/kernel_registry.hpp).
using GemmKernel = ops::KernelEntry<GemmProblem, GemmRunFn>;

/// How a backend runs a whole validated call: selects its entry once, runs it and returns it (for
/// GemmReport). The CPU's applies the BLAS rules for m = 0, n = 0 and alpha = 0 around entries
/// that need a product (gemm_call of src/cpu/gemm); CUDA's entries apply them themselves.
using GemmCallFn = const GemmKernel& (*)(const GemmProblem& problem, GemmCounters& counters);

/// The validation message for args ("" when valid), and for a valid call its decoded problem in
/// `problem` (untouched otherwise). Never throws (except std::bad_alloc).
std::string gemm_validate(const GemmArgs& args, GemmProblem& problem, ops::Stage stage = ops::Stage::call);
std::string gemm_validate(const GemmArgs& args, ops::Stage stage = ops::Stage::call);

}  // namespace ampkit::ops

// The one CPU declaration left here: the BLAS rules around a list's entries, which the CUDA
// reference entry (src/cuda/gemm/gemm_cuda_kernel_list.cpp) runs on the CPU list's reference;
// src/cuda may not include src/cpu headers, so it is declared beside the problem it rules.
namespace ampkit::cpu {

/// A whole validated call on the entries of `list` with the m = 0, n = 0 and alpha = 0 rules around
/// them (gemm_kernel_list.cpp; cpu::gemm_call is this on gemm_kernels(); the CUDA reference entry
/// passes the CPU reference alone).
const ops::GemmKernel& gemm_call_on(std::span<const ops::GemmKernel> list, const ops::GemmProblem& problem,
                                    ops::GemmCounters& counters);

}  // namespace ampkit::cpu
