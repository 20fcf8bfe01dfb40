"""ampkit from Python: the same library, zero-copy with PyTorch and NumPy (docs/PYTHON.md).

Tensors go in and out through DLPack (``__dlpack__``: torch.Tensor, numpy.ndarray >= 1.22; or a
raw DLPack capsule; or the buffer protocol) as ampkit ``TensorView``s over the same memory: no
copy either way. Each op writes outputs you give (``out=`` and the like, checked and written in
place) or ones this layer allocates with the framework of the first input (torch for a tensor,
numpy for an array; ``ampkit.empty`` otherwise, e.g. bf16 without torch). Errors are
``ampkit.Error`` subclasses by ErrorKind: ``InvalidArgumentError`` (a ValueError),
``UnsupportedError`` (a NotImplementedError), ``OutOfMemoryError`` (a MemoryError),
``InternalError`` (a RuntimeError), with ampkit's own message.

``ampkit._ampkit`` is the C++ API itself (every output given); this file adds the allocation.
"""

from collections import namedtuple

from . import _ampkit as _C
from ._ampkit import (  # noqa: F401  (re-exported)
    Error,
    InvalidArgumentError,
    UnsupportedError,
    OutOfMemoryError,
    InternalError,
    HostTensor,
    empty,
    # the calls with every output given, their checks and kernel names
    gemm_check,
    gemm_kernel_name,
    gemm_row_major_check,
    gemm_row_major_kernel_name,
    linear_forward_check,
    linear_forward_kernel_name,
    linear_backward_check,
    layer_norm_forward_check,
    layer_norm_forward_kernel_name,
    layer_norm_backward_check,
    layer_norm_backward_kernel_name,
    rms_norm_forward_check,
    rms_norm_forward_kernel_name,
    rms_norm_backward_check,
    rms_norm_backward_kernel_name,
    convert_check,
    convert_kernel_name,
    gelu_forward_check,
    gelu_forward_kernel_name,
    gelu_backward_check,
    gelu_backward_kernel_name,
    attention_forward_check,
    attention_forward_kernel_name,
    attention_backward_check,
    attention_backward_kernel_name,
    softmax_cross_entropy_forward_check,
    softmax_cross_entropy_forward_kernel_name,
    softmax_cross_entropy_backward_check,
    softmax_cross_entropy_backward_kernel_name,
    adamw_step,
    adamw_step_check,
    adamw_step_kernel_name,
    sgd_step,
    sgd_step_check,
    sgd_step_kernel_name,
    global_grad_norm,
    all_finite,
    # the fp16 policy
    gemm_fp16_mode,
    in_backward_pass,
    fp16_counters,
    reset_fp16_counters,
    BackwardPassGuard,
    # kernels and devices
    set_reference_kernels,
    reference_kernels,
    kernel_lists,
    cuda_built,
    cuda_device_count,
    set_cuda_stream,
    cuda_synchronize,
)

__all__ = [n for n in dir() if not n.startswith("_")]

# ---- allocation in the caller's framework ------------------------------------------------------

_TORCH_DTYPES = None
_NUMPY_DTYPES = {"f32": "float32", "f16": "float16", "i32": "int32"}
_DTYPE_NAMES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int32": "i32",
                "f32": "f32", "bf16": "bf16", "f16": "f16", "i32": "i32"}


def _torch_dtypes():
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch
        _TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32}
    return _TORCH_DTYPES


def dtype_name(t):
    """'f32', 'bf16', 'f16' or 'i32' for a tensor, a torch/numpy dtype or a name."""
    d = getattr(t, "dtype", t)
    name = getattr(d, "name", None) or str(d).replace("torch.", "")
    try:
        return _DTYPE_NAMES[name]
    except KeyError:
        raise InvalidArgumentError(f"ampkit: expected dtype f32, bf16, f16 or i32, but got {d}") from None


def _kind(t):
    module = type(t).__module__
    if module.startswith("torch"):
        return "torch"
    if module == "numpy":
        return "numpy"
    return None


def _new(like, shape, dtype):
    """An uninitialized tensor of `shape` and `dtype` (a name) in `like`'s framework and device."""
    kind = _kind(like)
    if kind == "torch":
        import torch
        return torch.empty(tuple(shape), dtype=_torch_dtypes()[dtype], device=like.device)
    if kind == "numpy" and dtype in _NUMPY_DTYPES:
        import numpy
        return numpy.empty(tuple(shape), dtype=_NUMPY_DTYPES[dtype])
    return empty(list(shape), dtype)


def _zeros(like, shape, dtype):
    t = _new(like, shape, dtype)
    if _kind(t) == "torch":
        t.zero_()
    elif _kind(t) == "numpy":
        t.fill(0)
    return t  # ampkit.empty is zero-filled


def _col_major(like, rows, cols, dtype):
    """A column-major (rows, cols) matrix: the transpose of a row-major (cols, rows) one."""
    return _new(like, (cols, rows), dtype).T if _kind(like) in ("torch", "numpy") else None


# ---- GEMM ---------------------------------------------------------------------------------------

def gemm(a, b, out=None, *, c=None, op_a="N", op_b="N", alpha=1.0, beta=0.0, epilogue="DEFAULT", gelu="tanh",
         bias=None, aux=None, bias_grad=None, accumulate_bias_grad=False, fp16_mode=None, dtype=None):
    """D = epilogue(alpha op(A) op(B) + beta C) in the BLAS column-major convention of ampkit::gemm.

    Every matrix is a rank-2 tensor of shape (rows, cols) with strides (1, ld): a row-major
    torch/numpy tensor ``t`` of shape (cols, rows) is that matrix as ``t.T``. op(A) is (m, k),
    op(B) (k, n), C and D (m, n); bias and bias_grad are vectors of length m (BGRADB: n); aux is
    (m, n), column-major. ``out`` (D) is allocated column-major when not given (dtype: `dtype`,
    else A's). ``fp16_mode=None`` lets the fp16 policy decide (and counts the call); a mode name
    forces it. Returns D.
    """
    if out is None:
        m = a.shape[0] if op_a == "N" else a.shape[1]
        n = b.shape[1] if op_b == "N" else b.shape[0]
        out = _col_major(a, m, n, dtype_name(dtype or a))
        if out is None:
            raise InvalidArgumentError("ampkit.gemm: d: give out= for inputs that are not torch tensors or numpy arrays")
    _C.gemm(a, b, out, c=c, op_a=op_a, op_b=op_b, alpha=alpha, beta=beta, epilogue=epilogue, gelu=gelu, bias=bias,
            aux=aux, bias_grad=bias_grad, accumulate_bias_grad=accumulate_bias_grad, fp16_mode=fp16_mode)
    return out


def gemm_row_major(a, b, out=None, *, c=None, op_a="N", op_b="N", alpha=1.0, beta=0.0, epilogue="DEFAULT",
                   gelu="tanh", bias=None, aux=None, bias_grad=None, accumulate_bias_grad=False, fp16_mode=None,
                   dtype=None):
    """d = epilogue(alpha op(a) op(b) + beta c), row-major (torch/numpy's own convention).

    op(a) is [M, K] (a is [K, M] for op_a='T'), op(b) [K, N], c and d [M, N]; the last dim of
    each contiguous. bias [N] along d's last dim (as F.linear); aux [M, N]. Returns d.
    """
    if out is None:
        m = a.shape[0] if op_a == "N" else a.shape[1]
        n = b.shape[1] if op_b == "N" else b.shape[0]
        out = _new(a, (m, n), dtype_name(dtype or a))
    _C.gemm_row_major(a, b, out, c=c, op_a=op_a, op_b=op_b, alpha=alpha, beta=beta, epilogue=epilogue, gelu=gelu,
                      bias=bias, aux=aux, bias_grad=bias_grad, accumulate_bias_grad=accumulate_bias_grad,
                      fp16_mode=fp16_mode)
    return out


matmul = gemm_row_major

# ---- Linear ---------------------------------------------------------------------------------------

LinearGrads = namedtuple("LinearGrads", "dx dw db below_db")


def linear_forward(x, w, bias=None, *, out=None, gelu=False, gelu_variant="tanh", aux=None, save_aux=False,
                   fp16_mode=None, dtype=None):
    """y = act(x w^T + bias), x [..., in], w [out, in] (ampkit/layers/linear.hpp).

    Returns y, or (y, aux) with ``save_aux`` (the pre-activation, y's dtype unless given).
    """
    shape = tuple(x.shape[:-1]) + (w.shape[0],)
    y = out if out is not None else _new(x, shape, dtype_name(dtype or x))
    if save_aux and aux is None:
        aux = _new(x, shape, dtype_name(y))
    _C.linear_forward(x, w, y, bias=bias, gelu=gelu, gelu_variant=gelu_variant, aux=aux, fp16_mode=fp16_mode)
    return (y, aux) if save_aux else y


def linear_backward(dy, x=None, w=None, *, dx=None, dw=None, db=None, need_dx=None, need_dw=None, need_db=False,
                    accumulate=False, below_gelu=False, below_gelu_variant="tanh", below_aux=None, below_db=None,
                    need_below_db=False, fp16_mode=None):
    """dx = dy w, dw = dy^T x, db = sum of dy (w's / f32 dtypes as given); with ``below_gelu`` dx
    is the gradient of the layer below's pre-activation (dx *= gelu'(below_aux)) and below_db its
    bias gradient (the fused DGELU_BGRAD epilogue). Outputs not given are allocated when needed
    (need_dx defaults to w given, need_dw to x given). Returns LinearGrads(dx, dw, db, below_db).
    """
    if need_dx is None:
        need_dx = w is not None
    if need_dw is None:
        need_dw = x is not None
    if dx is None and need_dx:
        dx = _new(dy, tuple(dy.shape[:-1]) + (w.shape[1],), dtype_name(x if x is not None else dy))
    if dw is None and need_dw:
        dw = _new(dy, tuple(w.shape) if w is not None else (dy.shape[-1], x.shape[-1]),
                  dtype_name(w if w is not None else dy))
    if db is None and need_db:
        db = _new(dy, (dy.shape[-1],), dtype_name(dw) if dw is not None else "f32")
    if below_db is None and need_below_db:
        below_db = _new(dy, (dx.shape[-1],), dtype_name(dx))
    _C.linear_backward(dy, x=x, w=w, dx=dx, dw=dw, db=db, accumulate=accumulate, below_gelu=below_gelu,
                       below_gelu_variant=below_gelu_variant, below_aux=below_aux, below_db=below_db,
                       fp16_mode=fp16_mode)
    return LinearGrads(dx, dw, db, below_db)


linear = linear_forward

# ---- the norms ----------------------------------------------------------------------------------

NormOutputs = namedtuple("NormOutputs", "y mean rstd")
NormGrads = namedtuple("NormGrads", "dx dgamma dbeta")


def _rows(x, normalized_rank):
    return tuple(x.shape[: len(x.shape) - normalized_rank])


def layer_norm_forward(x, gamma=None, beta=None, eps=1e-5, *, out=None, mean=None, rstd=None, normalized_rank=1):
    """LayerNorm over the trailing `normalized_rank` dims; gamma/beta x's dtype or f32.
    Returns NormOutputs(y, mean, rstd) (f32 statistics, allocated when not given)."""
    y = out if out is not None else _new(x, x.shape, dtype_name(x))
    if mean is None:
        mean = _new(x, _rows(x, normalized_rank), "f32")
    if rstd is None:
        rstd = _new(x, _rows(x, normalized_rank), "f32")
    _C.layer_norm_forward(x, y, gamma=gamma, beta=beta, eps=eps, mean=mean, rstd=rstd,
                          normalized_rank=normalized_rank)
    return NormOutputs(y, mean, rstd)


def rms_norm_forward(x, gamma=None, eps=1e-5, *, out=None, rstd=None, normalized_rank=1):
    """RMSNorm over the trailing `normalized_rank` dims. Returns NormOutputs(y, None, rstd)."""
    y = out if out is not None else _new(x, x.shape, dtype_name(x))
    if rstd is None:
        rstd = _new(x, _rows(x, normalized_rank), "f32")
    _C.rms_norm_forward(x, y, gamma=gamma, eps=eps, rstd=rstd, normalized_rank=normalized_rank)
    return NormOutputs(y, None, rstd)


def layer_norm(x, gamma=None, beta=None, eps=1e-5, *, out=None, normalized_rank=1):
    """y of layer_norm_forward (no statistics saved)."""
    y = out if out is not None else _new(x, x.shape, dtype_name(x))
    _C.layer_norm_forward(x, y, gamma=gamma, beta=beta, eps=eps, normalized_rank=normalized_rank)
    return y


def rms_norm(x, gamma=None, eps=1e-5, *, out=None, normalized_rank=1):
    """y of rms_norm_forward (no statistics saved)."""
    y = out if out is not None else _new(x, x.shape, dtype_name(x))
    _C.rms_norm_forward(x, y, gamma=gamma, eps=eps, normalized_rank=normalized_rank)
    return y


def _norm_backward(fn, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, need_dx, need_dgamma, need_dbeta, accumulate,
                   normalized_rank):
    if dx is None and need_dx:
        dx = _new(dy, dy.shape, dtype_name(dy))
    if dgamma is None and need_dgamma and gamma is not None:
        dgamma = _zeros(dy, gamma.shape, dtype_name(gamma)) if accumulate else _new(dy, gamma.shape, dtype_name(gamma))
    if dbeta is None and need_dbeta and gamma is not None:
        dbeta = _zeros(dy, gamma.shape, dtype_name(gamma)) if accumulate else _new(dy, gamma.shape, dtype_name(gamma))
    fn(dy, x=x, mean=mean, rstd=rstd, gamma=gamma, dx=dx, dgamma=dgamma, dbeta=dbeta, accumulate=accumulate,
       normalized_rank=normalized_rank)
    return NormGrads(dx, dgamma, dbeta)


def layer_norm_backward(dy, x, mean, rstd, gamma=None, *, dx=None, dgamma=None, dbeta=None, need_dx=True,
                        need_dgamma=True, need_dbeta=True, accumulate=False, normalized_rank=1):
    """dx, dgamma, dbeta of layer_norm_forward (dgamma/dbeta in gamma's dtype unless given).
    Returns NormGrads(dx, dgamma, dbeta)."""
    return _norm_backward(_C.layer_norm_backward, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, need_dx, need_dgamma,
                          need_dbeta, accumulate, normalized_rank)


def rms_norm_backward(dy, x, rstd, gamma=None, *, dx=None, dgamma=None, need_dx=True, need_dgamma=True,
                      accumulate=False, normalized_rank=1):
    """dx, dgamma of rms_norm_forward. Returns NormGrads(dx, dgamma, None)."""
    return _norm_backward(_C.rms_norm_backward, dy, x, None, rstd, gamma, dx, dgamma, None, need_dx, need_dgamma,
                          False, accumulate, normalized_rank)


# ---- convert, GELU, attention, the loss -----------------------------------------------------------

def convert(src, dtype=None, *, out=None):
    """src rounded (to nearest even) to `dtype`, or into `out`. Returns the output."""
    if out is None:
        out = _new(src, src.shape, dtype_name(dtype))
    _C.convert(src, out)
    return out


def gelu(x, *, out=None, variant="tanh"):
    y = out if out is not None else _new(x, x.shape, dtype_name(x))
    _C.gelu_forward(x, y, variant=variant)
    return y


def gelu_backward(x, dy, *, out=None, variant="tanh"):
    dx = out if out is not None else _new(dy, dy.shape, dtype_name(dy))
    _C.gelu_backward(x, dy, dx, variant=variant)
    return dx


AttentionOutputs = namedtuple("AttentionOutputs", "out lse")
AttentionGrads = namedtuple("AttentionGrads", "dq dk dv")


def attention_forward(q, k, v, heads=1, *, scale=0.0, out=None, lse=None):
    """Causal attention on q, k, v [batch, seq, heads * head_dim]. Returns AttentionOutputs(out, lse)."""
    if out is None:
        out = _new(q, q.shape, dtype_name(q))
    if lse is None:
        lse = _new(q, (q.shape[0], heads, q.shape[1]), "f32")
    _C.attention_forward(q, k, v, out, lse, heads=heads, scale=scale)
    return AttentionOutputs(out, lse)


def attention_backward(q, k, v, out, lse, dout, heads=1, *, scale=0.0, dq=None, dk=None, dv=None, accumulate=False):
    """dq, dk, dv of attention_forward (q's, k's, v's dtypes). Returns AttentionGrads."""
    dq = dq if dq is not None else _new(dout, q.shape, dtype_name(q))
    dk = dk if dk is not None else _new(dout, k.shape, dtype_name(k))
    dv = dv if dv is not None else _new(dout, v.shape, dtype_name(v))
    _C.attention_backward(q, k, v, out, lse, dout, dq=dq, dk=dk, dv=dv, heads=heads, scale=scale,
                          accumulate=accumulate)
    return AttentionGrads(dq, dk, dv)


def softmax_cross_entropy_forward(logits, targets, *, loss=None, lse=None):
    """The mean softmax cross-entropy. Returns (loss [] f32, lse [rows] f32)."""
    if loss is None:
        loss = _new(logits, (), "f32")
    if lse is None:
        lse = _new(logits, (logits.shape[0],), "f32")
    _C.softmax_cross_entropy_forward(logits, targets, loss, lse)
    return loss, lse


def softmax_cross_entropy_backward(logits, targets, lse, dloss=1.0, *, out=None):
    """dlogits of the mean loss, in logits' dtype (out= may be logits itself: in place)."""
    dlogits = out if out is not None else _new(logits, logits.shape, dtype_name(logits))
    _C.softmax_cross_entropy_backward(logits, targets, lse, float(dloss), dlogits)
    return dlogits


# ---- the fp16 policy ------------------------------------------------------------------------------

def fp16_policy(device_model=None, gemm_alt_impl=None, conv_alt_impl=None):
    """Sets and reports the fp16 policy (ampkit/numerics/fp16_policy.hpp).

    device_model: 'cpu' | 'mi200'; gemm_alt_impl / conv_alt_impl: 'per-pass' | 'original' |
    'alternate'. 'env' forgets an API choice (the environment decides again); None leaves it.
    Returns the settings in effect: a dict with device_model, gemm_alt_impl, conv_alt_impl.
    """
    for value, set_, clear in ((device_model, _C.set_fp16_device_model, _C.clear_fp16_device_model),
                               (gemm_alt_impl, _C.set_gemm_fp16_alt_impl, _C.clear_gemm_fp16_alt_impl),
                               (conv_alt_impl, _C.set_conv_fp16_alt_impl, _C.clear_conv_fp16_alt_impl)):
        if value == "env":
            clear()
        elif value is not None:
            set_(value)
    return {"device_model": _C.fp16_device_model(), "gemm_alt_impl": _C.gemm_fp16_alt_impl(),
            "conv_alt_impl": _C.conv_fp16_alt_impl()}


def backward_pass(backward=True):
    """``with ampkit.backward_pass():`` marks this thread as running backward work (the fp16
    policy's per-pass default gives fp16 GEMMs the alt mode there); ``backward_pass(False)``
    marks forward work. Nestable; restored on exit, exceptions included."""
    return BackwardPassGuard(backward)
