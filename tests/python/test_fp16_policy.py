# The fp16 policy from Python: the guard, the counters, and the guard active exactly in the
# backward of ampkit.torch's modules.
import pytest

from conftest import HAVE_TORCH, needs_torch

import ampkit

if HAVE_TORCH:
    import torch


@pytest.fixture(autouse=True)
def per_pass_policy():
    ampkit.fp16_policy(device_model="cpu", gemm_alt_impl="per-pass")
    yield
    ampkit.fp16_policy(device_model="env", gemm_alt_impl="env")


def test_guard_marks_the_pass_and_restores_it():
    assert not ampkit.in_backward_pass()
    assert ampkit.gemm_fp16_mode() == "exact"
    with ampkit.backward_pass():
        assert ampkit.in_backward_pass()
        assert ampkit.gemm_fp16_mode() == "alt"
        with ampkit.backward_pass(False):
            assert not ampkit.in_backward_pass()
        assert ampkit.in_backward_pass()
    assert not ampkit.in_backward_pass()
    with pytest.raises(KeyError):
        with ampkit.backward_pass():
            raise KeyError("x")
    assert not ampkit.in_backward_pass()


def test_policy_settings_round_trip():
    s = ampkit.fp16_policy(gemm_alt_impl="alternate")
    assert s["gemm_alt_impl"] == "alternate" and s["device_model"] == "cpu"
    assert ampkit.gemm_fp16_mode() == "alt"
    with pytest.raises(ValueError, match="gemm_alt_impl"):
        ampkit.fp16_policy(gemm_alt_impl="sometimes")


def _calls():
    c = ampkit.fp16_counters()
    return c["exact"]["gemm_calls"], c["alt"]["gemm_calls"]


@needs_torch
def test_guard_is_active_exactly_in_the_backward_of_ampkit_modules():
    import ampkit.torch as at

    torch.manual_seed(0)
    layer = at.Linear(16, 8).to(torch.float16)
    x = torch.randn(4, 16, dtype=torch.float16, requires_grad=True)
    ampkit.reset_fp16_counters()
    y = layer(x)
    assert _calls() == (1, 0)  # the forward GEMM: the original mode (exact)
    seen = []
    y.register_hook(lambda g: seen.append(ampkit.in_backward_pass()))
    y.float().sum().backward()
    assert _calls() == (1, 2)  # dx and dw (with db fused): alt, the backward default
    assert seen == [False]  # outside ampkit's backward the guard is off again
    assert not ampkit.in_backward_pass()
    assert x.grad is not None and layer.weight.grad.dtype == torch.float16


@needs_torch
def test_explicit_mode_is_forced_and_not_counted():
    a = torch.randn(8, 8, dtype=torch.float16)
    ampkit.reset_fp16_counters()
    ampkit.gemm_row_major(a, a, fp16_mode="flush")
    assert _calls() == (0, 0)
    ampkit.gemm_row_major(a, a)
    assert _calls() == (1, 0)
