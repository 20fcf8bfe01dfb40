# The error bounds of the Python tests: the formulas of include/ampkit/numerics/error_bounds.hpp
# (derived in docs/NUMERICS.md), applied to torch's own result in float64 on the same (already
# rounded) inputs, so each tolerance follows from the dtypes and the reduction length.
U32 = 2.0 ** -24
UNIT = {"f32": 2.0 ** -24, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
SUBNORMAL = {"f32": 2.0 ** -149, "bf16": 2.0 ** -133, "f16": 2.0 ** -24}


def gemm_tolerance(k, s, ref, d, gelu=False):
    """error_bounds::gemm_output(gemm_activation(gemm_accumulation(k, s))): k multiply-adds in
    fp32 over the magnitudes s = sum |a b| + |bias|, GELU's slope and evaluation, then one
    rounding of each side to d's dtype."""
    pre = (k + 4.0) * U32 * s
    err = 1.13 * pre + 64.0 * U32 * s if gelu else pre
    u = UNIT[d]
    return err * (1.0 + u) + 2.0 * u * abs(ref) + SUBNORMAL[d]


def norm_tolerance(n, magnitude, ref, out):
    """A row reduction over n terms has a chain of at most k = n/8 + 16 fp32 adds (every kernel
    keeps 8 partial sums, docs/NUMERICS.md); the statistics and the normalisation add a few
    roundings more (k + 8), scaled by the magnitudes the result is made of; then one rounding of
    each side to the output dtype."""
    k = n / 8 + 16
    u = UNIT[out]
    return 4.0 * (k + 8) * U32 * magnitude + 2.0 * u * abs(ref) + 2.0 * SUBNORMAL[out]


def sum_tolerance(n, magnitude, ref, out):
    """A sum of n terms in fp32 (pairs, blocks: at most n + 2 rounding steps) and one rounding."""
    u = UNIT[out]
    return (n + 2.0) * U32 * magnitude + 2.0 * u * abs(ref) + 2.0 * SUBNORMAL[out]
