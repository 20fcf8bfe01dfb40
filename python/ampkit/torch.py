"""ampkit's kernels as PyTorch autograd functions and modules (docs/PYTHON.md, "ampkit.torch").

LayerNorm and RMSNorm take any activation dtype with f32 (or matching) parameters, the bf16 case
PyTorch does not fuse; Linear fuses the bias and GELU into its forward GEMM and the bias gradient
into its dW GEMM; Mlp (Linear + GELU + Linear) also fuses the GELU backward and the first bias
gradient into the second layer's dX GEMM. Every backward runs inside ``ampkit.backward_pass()``,
so the fp16 policy's backward-only default (alt) applies in a PyTorch training loop as it does in
ampkit's own graph. Tensors are handed over through DLPack without copies; on CUDA ampkit's ops
enqueue on PyTorch's current stream.
"""

import torch
from torch import nn

import ampkit
from . import _ampkit as _C

__all__ = ["LayerNormFunction", "RMSNormFunction", "LinearFunction", "MlpFunction", "LayerNorm", "RMSNorm",
           "Linear", "Mlp"]


def _stream(t):
    if t.is_cuda:
        _C.set_cuda_stream(torch.cuda.current_stream(t.device).cuda_stream, t.device.index or 0)


def _grad_buffer(p, needed):
    return torch.empty_like(p) if (p is not None and needed) else None


class LayerNormFunction(torch.autograd.Function):
    """y = LayerNorm(x) * weight + bias over the trailing `normalized_rank` dims."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, normalized_rank):
        x = x.contiguous()
        _stream(x)
        rows = x.shape[: x.dim() - normalized_rank]
        y = torch.empty_like(x)
        mean = torch.empty(rows, dtype=torch.float32, device=x.device)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        _C.layer_norm_forward(x, y, gamma=weight, beta=bias, eps=eps, mean=mean, rstd=rstd,
                              normalized_rank=normalized_rank)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.has_bias = bias is not None
        ctx.normalized_rank = normalized_rank
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dy = dy.contiguous()
        _stream(dy)  # the autograd engine runs a CUDA backward on a thread of its own
        dx = torch.empty_like(x) if need_dx else None
        dweight = _grad_buffer(weight, need_dw)
        dbias = torch.empty_like(weight) if (ctx.has_bias and need_db) else None
        with ampkit.backward_pass():
            _C.layer_norm_backward(dy, x=x, mean=mean, rstd=rstd, gamma=weight, dx=dx, dgamma=dweight, dbeta=dbias,
                                   normalized_rank=ctx.normalized_rank)
        return dx, dweight, dbias, None, None


class RMSNormFunction(torch.autograd.Function):
    """y = x / rms(x) * weight over the trailing `normalized_rank` dims."""

    @staticmethod
    def forward(ctx, x, weight, eps, normalized_rank):
        x = x.contiguous()
        _stream(x)
        rows = x.shape[: x.dim() - normalized_rank]
        y = torch.empty_like(x)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        _C.rms_norm_forward(x, y, gamma=weight, eps=eps, rstd=rstd, normalized_rank=normalized_rank)
        ctx.save_for_backward(x, weight, rstd)
        ctx.normalized_rank = normalized_rank
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        need_dx, need_dw = ctx.needs_input_grad[:2]
        dy = dy.contiguous()
        _stream(dy)  # the autograd engine runs a CUDA backward on a thread of its own
        dx = torch.empty_like(x) if need_dx else None
        dweight = _grad_buffer(weight, need_dw)
        with ampkit.backward_pass():
            _C.rms_norm_backward(dy, x=x, rstd=rstd, gamma=weight, dx=dx, dgamma=dweight,
                                 normalized_rank=ctx.normalized_rank)
        return dx, dweight, None, None


def _bias_for(bias, y_dtype):
    # ampkit takes a bias in y's dtype or f32.
    if bias is None or bias.dtype in (y_dtype, torch.float32):
        return bias
    return bias.to(y_dtype)


class LinearFunction(torch.autograd.Function):
    """y = act(x weight^T + bias), act the identity or GELU, in one GEMM (bias and GELU fused).
    The backward: dx GEMM, then dW GEMM with the bias gradient fused (BGRADB); with GELU the
    GELU backward runs first on the saved pre-activation."""

    @staticmethod
    def forward(ctx, x, weight, bias, gelu, gelu_variant):
        x = x.contiguous()
        _stream(x)
        y = torch.empty(x.shape[:-1] + (weight.shape[0],), dtype=x.dtype, device=x.device)
        aux = torch.empty_like(y) if gelu else None
        _C.linear_forward(x, weight, y, bias=_bias_for(bias, y.dtype), gelu=gelu, gelu_variant=gelu_variant, aux=aux)
        ctx.save_for_backward(x, weight, aux)
        ctx.has_bias = bias is not None
        ctx.bias_dtype = bias.dtype if bias is not None else None
        ctx.gelu_variant = gelu_variant
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, aux = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dy = dy.contiguous()
        _stream(dy)  # the autograd engine runs a CUDA backward on a thread of its own
        with ampkit.backward_pass():
            if aux is not None:  # through the GELU: dpre = dy * gelu'(aux)
                dpre = torch.empty_like(dy)
                _C.gelu_backward(aux, dy, dpre, variant=ctx.gelu_variant)
                dy = dpre
            dx = torch.empty_like(x) if need_dx else None
            dw = torch.empty_like(weight) if need_dw else None
            db = None
            if ctx.has_bias and need_db:
                db = torch.empty(weight.shape[0], dtype=weight.dtype if dw is not None else ctx.bias_dtype,
                                 device=weight.device)
                if dw is not None and db.dtype not in (dw.dtype, torch.float32):
                    db = torch.empty(weight.shape[0], dtype=torch.float32, device=weight.device)
            _C.linear_backward(dy, x=x, w=weight, dx=dx, dw=dw, db=db)
        return dx, dw, db, None, None


class MlpFunction(torch.autograd.Function):
    """y = fc2(gelu(fc1(x))): the forward's two GEMMs fuse bias+GELU (saving the pre-activation)
    and bias; the backward's dX GEMM of fc2 fuses GELU's backward and fc1's bias gradient
    (DGELU_BGRAD), so the hidden gradient never exists apart from its pre-activation form."""

    @staticmethod
    def forward(ctx, x, w1, b1, w2, b2, gelu_variant):
        x = x.contiguous()
        _stream(x)
        hidden_shape = x.shape[:-1] + (w1.shape[0],)
        h = torch.empty(hidden_shape, dtype=x.dtype, device=x.device)
        aux = torch.empty_like(h)
        _C.linear_forward(x, w1, h, bias=_bias_for(b1, h.dtype), gelu=True, gelu_variant=gelu_variant, aux=aux)
        y = torch.empty(x.shape[:-1] + (w2.shape[0],), dtype=x.dtype, device=x.device)
        _C.linear_forward(h, w2, y, bias=_bias_for(b2, y.dtype))
        ctx.save_for_backward(x, w1, aux, h, w2)
        ctx.has_b1, ctx.has_b2 = b1 is not None, b2 is not None
        ctx.gelu_variant = gelu_variant
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w1, aux, h, w2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        dy = dy.contiguous()
        _stream(dy)  # the autograd engine runs a CUDA backward on a thread of its own
        f32 = torch.float32
        with ampkit.backward_pass():
            dpre = torch.empty_like(aux)
            dw2 = torch.empty_like(w2)
            db2 = torch.empty(w2.shape[0], dtype=f32, device=w2.device) if ctx.has_b2 else None
            db1 = torch.empty(w1.shape[0], dtype=f32, device=w1.device) if ctx.has_b1 else None
            _C.linear_backward(dy, x=h, w=w2, dx=dpre, dw=dw2, db=db2, below_gelu=True,
                               below_gelu_variant=ctx.gelu_variant, below_aux=aux, below_db=db1)
            dx = torch.empty_like(x) if need[0] else None
            dw1 = torch.empty_like(w1)
            _C.linear_backward(dpre, x=x, w=w1, dx=dx, dw=dw1)
        return (dx, dw1 if need[1] else None, db1 if need[2] else None, dw2 if need[3] else None,
                db2 if need[4] else None, None)


def _shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(nn.Module):
    """torch.nn.LayerNorm on ampkit's kernels; any activation dtype, parameters f32 by default."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=torch.float32):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape, device=device, dtype=dtype))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape, device=device, dtype=dtype)) if bias else None
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        return LayerNormFunction.apply(x, self.weight, self.bias, self.eps, len(self.normalized_shape))

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class RMSNorm(nn.Module):
    """RMSNorm on ampkit's kernels (bf16 activations with f32 parameters included)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=torch.float32):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight, self.eps, len(self.normalized_shape))

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Linear(nn.Linear):
    """torch.nn.Linear (same parameters and initialisation) on ampkit's fused GEMMs; ``gelu=True``
    applies GELU (``gelu_variant`` 'tanh' or 'erf') inside the GEMM. The output has x's dtype."""

    def __init__(self, in_features, out_features, bias=True, gelu=False, gelu_variant="tanh", device=None,
                 dtype=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.gelu = gelu
        self.gelu_variant = gelu_variant

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias, self.gelu, self.gelu_variant)

    def extra_repr(self):
        return super().extra_repr() + (f", gelu={self.gelu_variant}" if self.gelu else "")


class Mlp(nn.Module):
    """fc2(gelu(fc1(x))) as one autograd function with the fused backward epilogues."""

    def __init__(self, in_features, hidden_features, out_features=None, bias=True, gelu_variant="tanh",
                 device=None, dtype=None):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features, bias=bias, device=device, dtype=dtype)
        self.fc2 = nn.Linear(hidden_features, out_features or in_features, bias=bias, device=device, dtype=dtype)
        self.gelu_variant = gelu_variant

    def forward(self, x):
        return MlpFunction.apply(x, self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias,
                                 self.gelu_variant)
