// The constants of the GEMM epilogue's tanh GELU in its exp2 form (kernels layer, internal),
// shared by the AVX-512 and AVX2 implementations (gelu_math_avx512.hpp, gelu_math_avx2.hpp),
// which apply them with the same operations in the same order and so give the same bits:
//   y = x (Y1 + Y3 x^2) = -2u log2(e),  u = sqrt(2/pi) (x + 0.044715 x^3), clamped to [-120, 120];
//   e = 2^y = 2^f 2^n (n = nearest integer to y, f = y - n in [-1/2, 1/2], 2^f by a degree-6
//   polynomial, 2^n exact);
//   gelu(x) = x / (1 + e) = 0.5 x (1 + tanh u);
//   gelu'(x) = s + (x k s)(e s), s = 1 / (1 + e), 1 - s = e s, k = 2u' = K1 + K3 x^2.
// No step produces a subnormal (a microcode assist of ~100 cycles per instruction on Intel
// cores), none uses an approximate instruction (vrcp14ps: its bits are not specified, so a
// division keeps the results the same on every x86). Error bound: docs/NUMERICS.md, "GELU".
#pragma once

namespace ampkit::cpu::gemm_math {

/// y = x (kGeluY1 + kGeluY3 x^2): -2 sqrt(2/pi) log2(e) and that times 0.044715, rounded to fp32.
constexpr float kGeluY1 = static_cast<float>(-2.0 * 0.79788456080286536 * 1.4426950408889634);
constexpr float kGeluY3 = static_cast<float>(-2.0 * 0.79788456080286536 * 1.4426950408889634 * 0.044715);
/// |y| <= 120: e in [2^-120, 2^120.5], 1 + e and 1 / (1 + e) are normal. Beyond, 1 + e == 1 in
/// fp32 (y < -24 already) or gelu and gelu' are below 2^-109 |x| resp. 2^-108 (docs/NUMERICS.md).
constexpr float kGeluYClamp = 120.0f;
/// gelu' clamps x to [-20, 20] (exactly 0 or 1 in fp32 beyond), so that x k cannot overflow.
constexpr float kGeluDerivativeXClamp = 20.0f;
/// 2u' = K1 + K3 x^2 = 2 sqrt(2/pi) (1 + 3 * 0.044715 x^2).
constexpr float kGeluK1 = static_cast<float>(2.0 * 0.79788456080286536);
constexpr float kGeluK3 = static_cast<float>(2.0 * 0.79788456080286536 * 3.0 * 0.044715);
/// 2^f on [-1/2, 1/2]: the degree-6 polynomial interpolating 2^f at the 7 Chebyshev nodes,
/// coefficients rounded to fp32 (relative error 1.9e-8 = 0.32 * 2^-24 with these fp32
/// coefficients, evaluated in double; Horner in fp32 adds < 1.2 * 2^-24).
constexpr float kExp2P[7] = {1.0f,           0x1.62e43p-1f,   0x1.ebfbe0p-3f, 0x1.c6aeccp-5f,
                             0x1.3b2a1cp-7f, 0x1.5f48c0p-10f, 0x1.444p-13f};

}  // namespace ampkit::cpu::gemm_math
