# ampkit.torch: each module's forward and gradients against torch's own module, and a small model
# trained with ampkit's modules following the same model built from torch's.
import pytest

from conftest import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import ampkit.torch as at

pytestmark = needs_torch


def _grads(module, x, dy):
    x = x.clone().requires_grad_(True)
    y = module(x)
    y.backward(dy)
    return y.detach(), x.grad, {n: p.grad.clone() for n, p in module.named_parameters()}


def test_layer_norm_module_matches_torch():
    torch.manual_seed(0)
    ours, theirs = at.LayerNorm(24), torch.nn.LayerNorm(24)
    with torch.no_grad():
        for m in (ours, theirs):
            m.weight.uniform_(0.5, 1.5)
            m.bias.normal_()
        theirs.load_state_dict(ours.state_dict())
    x, dy = torch.randn(3, 5, 24), torch.randn(3, 5, 24)
    a, b = _grads(ours, x, dy), _grads(theirs, x, dy)
    assert torch.allclose(a[0], b[0], atol=2e-6)
    assert torch.allclose(a[1], b[1], atol=2e-5)
    for n in ("weight", "bias"):
        assert torch.allclose(a[2][n], b[2][n], atol=2e-5), n


def test_rms_norm_bf16_activations_with_f32_weights():
    torch.manual_seed(0)
    norm = at.RMSNorm(32)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
    x = torch.randn(6, 32).to(torch.bfloat16)
    xr = x.float().requires_grad_(True)
    y = norm(x.requires_grad_(True))
    assert y.dtype == torch.bfloat16 and norm.weight.dtype == torch.float32
    ref = xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-5) * norm.weight.detach()
    assert torch.allclose(y.float(), ref, rtol=2 ** -7, atol=1e-3)
    dy = torch.randn(6, 32).to(torch.bfloat16)
    y.backward(dy)
    wr = norm.weight.detach().clone().requires_grad_(True)
    (xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-5) * wr).backward(dy.float())
    assert x.grad.dtype == torch.bfloat16 and norm.weight.grad.dtype == torch.float32
    assert torch.allclose(x.grad.float(), xr.grad, rtol=2 ** -6, atol=2e-2)
    assert torch.allclose(norm.weight.grad, wr.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("gelu", [False, True])
def test_linear_module_matches_torch(gelu):
    torch.manual_seed(0)
    ours = at.Linear(20, 12, gelu=gelu)
    theirs = torch.nn.Linear(20, 12)
    theirs.load_state_dict(ours.state_dict())
    model = (lambda t: F.gelu(theirs(t), approximate="tanh")) if gelu else theirs
    x, dy = torch.randn(7, 20), torch.randn(7, 12)
    x1 = x.clone().requires_grad_(True)
    y1 = ours(x1)
    y1.backward(dy)
    x2 = x.clone().requires_grad_(True)
    y2 = model(x2)
    y2.backward(dy)
    assert torch.allclose(y1, y2, atol=1e-5)
    assert torch.allclose(x1.grad, x2.grad, atol=1e-5)
    assert torch.allclose(ours.weight.grad, theirs.weight.grad, atol=1e-5)
    assert torch.allclose(ours.bias.grad, theirs.bias.grad, atol=1e-5)


def test_mlp_fused_backward_matches_torch():
    torch.manual_seed(0)
    ours = at.Mlp(16, 32)
    fc1, fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)
    fc1.load_state_dict(ours.fc1.state_dict())
    fc2.load_state_dict(ours.fc2.state_dict())
    x, dy = torch.randn(5, 16), torch.randn(5, 16)
    x1 = x.clone().requires_grad_(True)
    ours(x1).backward(dy)
    x2 = x.clone().requires_grad_(True)
    fc2(F.gelu(fc1(x2), approximate="tanh")).backward(dy)
    assert torch.allclose(x1.grad, x2.grad, atol=1e-5)
    for a, b in ((ours.fc1, fc1), (ours.fc2, fc2)):
        assert torch.allclose(a.weight.grad, b.weight.grad, atol=1e-5)
        assert torch.allclose(a.bias.grad, b.bias.grad, atol=1e-5)


class _Model(torch.nn.Module if HAVE_TORCH else object):
    def __init__(self, ampkit_modules):
        super().__init__()
        nn = at if ampkit_modules else torch.nn
        self.fc1 = nn.Linear(8, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x)), approximate="tanh"))


def test_small_model_trained_with_ampkit_modules_follows_torch():
    torch.manual_seed(0)
    ours, theirs = _Model(True), _Model(False)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(64, 8)
    target = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    losses = []
    for model in (ours, theirs):
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        curve = []
        for _ in range(30):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), target)
            loss.backward()
            opt.step()
            curve.append(loss.item())
        losses.append(curve)
    assert losses[0][-1] < 0.6 * losses[0][0]  # it learns
    for a, b in zip(*losses):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (a, b)
