// The skinny GEMM engine on AVX-512 (kernels layer): kernel-list entry "gemm_skinny_f32_avx512"
// (gemm_front_end.cpp), taken when 1 <= min(m, n) <= 16. Reads the large operand in place with
// on-the-fly widening (f32/bf16/f16, fp16 mode applied per vector), fp32 FMA (gemm_skinny.hpp).
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_skinny.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

// The vocabulary plus the engine's sizes: small columns 4 per pass over a chunk of W (4 W vectors
// x 4 columns: 8 loads per 16 FMAs, where 16 columns x 1 vector took 17 and bound the loop on
// the load ports), 16 accumulators, up to 512 rows of the large operand per work unit, bias rows
// packed 32 at a time.
struct SkinnyAvx512 : Avx512Ops {
  static constexpr std::int64_t kMaxCols = 4, kAccumulators = 16, kRowBlock = 512, kMr = 32;
};

}  // namespace

void gemm_run_skinny_f32_avx512(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run_engine<SkinnyEngine<SkinnyAvx512>>(problem, counters);
}

}  // namespace ampkit::cpu
