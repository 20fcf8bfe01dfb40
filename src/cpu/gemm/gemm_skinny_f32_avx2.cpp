// The skinny GEMM engine on AVX2 (kernels layer): kernel-list entry "gemm_skinny_f32_avx2"
// (gemm_front_end.cpp), taken when 1 <= min(m, n) <= 16. Reads the large operand in place with
// on-the-fly widening (f32/bf16/f16, fp16 mode applied per vector), fp32 FMA (gemm_skinny.hpp).
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_skinny.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

// The vocabulary plus the engine's sizes: small columns 4 per pass over a chunk of W (2 W vectors
// x 4 columns: 6 loads per 8 FMAs, where 8 columns x 1 vector took 9), 8 accumulators, up to 512
// rows of the large operand per work unit, bias rows packed 16 at a time.
struct SkinnyAvx2 : Avx2Ops {
  static constexpr std::int64_t kMaxCols = 4, kAccumulators = 8, kRowBlock = 512, kMr = 16;
};

}  // namespace

void gemm_run_skinny_f32_avx2(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run_engine<SkinnyEngine<SkinnyAvx2>>(problem, counters);
}

}  // namespace ampkit::cpu
