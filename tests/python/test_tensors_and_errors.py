# DLPack in and out, zero copy, and bad tensors: the right exception with ampkit's message, and
# outputs left untouched.
import ctypes

import pytest

from conftest import HAVE_NUMPY, HAVE_TORCH, needs_numpy, needs_torch

import ampkit

if HAVE_TORCH:
    import torch
if HAVE_NUMPY:
    import numpy as np


def test_exception_classes_follow_error_kinds():
    assert issubclass(ampkit.InvalidArgumentError, ValueError)
    assert issubclass(ampkit.UnsupportedError, NotImplementedError)
    assert issubclass(ampkit.OutOfMemoryError, MemoryError)
    assert issubclass(ampkit.InternalError, RuntimeError)
    for e in (ampkit.InvalidArgumentError, ampkit.UnsupportedError, ampkit.OutOfMemoryError, ampkit.InternalError):
        assert issubclass(e, ampkit.Error)


def test_out_of_memory_is_a_memory_error():
    with pytest.raises(MemoryError, match="ampkit.empty: could not allocate"):
        ampkit.empty([2 ** 60], "f32")


def test_host_tensor_exports_without_a_copy():
    t = ampkit.empty([3, 4], "bf16")
    assert t.shape == (3, 4) and t.dtype == "bf16"
    if HAVE_TORCH:
        tt = torch.from_dlpack(t)
        assert tt.dtype == torch.bfloat16 and tt.shape == (3, 4)
        assert tt.data_ptr() == t.data_ptr()
        del t  # the storage lives as long as the torch tensor
        tt.fill_(1.5)
        assert float(tt.float().sum()) == 18.0


@needs_numpy
def test_numpy_arrays_in_and_out_in_place():
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    y = np.full_like(x, 7.0)
    out = ampkit.layer_norm(x, out=y)
    assert out is y and out.__array_interface__["data"][0] == y.__array_interface__["data"][0]
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert np.abs(y - ref).max() < 1e-5
    # a read-only array is taken as an input (NumPy's __dlpack__ refuses it: the buffer protocol)
    x.setflags(write=False)
    y2 = ampkit.layer_norm(x)
    assert isinstance(y2, np.ndarray) and np.array_equal(y2, y)
    # ... but never as an output
    ro = np.zeros_like(y)
    ro.setflags(write=False)
    with pytest.raises(ampkit.InvalidArgumentError, match=r"ampkit.layer_norm_forward: y: expected a writable"):
        ampkit.layer_norm(y, out=ro)
    assert not ro.any()


@needs_numpy
def test_numpy_float64_is_refused_naming_the_argument():
    x = np.zeros((2, 8))
    with pytest.raises(ValueError, match=r"ampkit.layer_norm_forward: x: expected dtype f32, bf16, f16 or i32, but got float64"):
        ampkit._ampkit.layer_norm_forward(x, np.zeros((2, 8), np.float32))


@needs_torch
def test_torch_out_is_written_in_place_and_inputs_are_not_copied():
    x = torch.randn(4, 32, dtype=torch.bfloat16)
    gamma = torch.rand(32)  # f32 parameters with bf16 activations
    y = torch.empty_like(x)
    r = ampkit.rms_norm(x, gamma, out=y)
    assert r is y and r.data_ptr() == y.data_ptr()
    # a slice is a view with an offset: the kernel reads it in place
    big = torch.randn(8, 32)
    y2 = ampkit.layer_norm(big[2:6])
    assert torch.allclose(y2, torch.nn.functional.layer_norm(big[2:6], (32,)), atol=1e-5)


@needs_torch
def test_requires_grad_tensors_are_accepted():
    x = torch.randn(3, 8, requires_grad=True)
    y = ampkit.layer_norm(x)
    assert not y.requires_grad


def _poisoned(*shape, dtype=None):
    return torch.full(shape, 123.0, dtype=dtype or torch.float32)


@needs_torch
@pytest.mark.parametrize(
    "case, pattern",
    [
        ("dtype", r"ampkit.layer_norm_forward: x: expected dtype f32, bf16, f16 or i32, but got float64"),
        ("shape", r"^layer_norm_forward: y must have x's shape \[4, 16\], but got \[4, 15\]$"),
        ("noncontiguous", r"^layer_norm_forward: x must be row-major contiguous"),
        ("gamma_dtype", r"layer_norm_forward.*gamma"),
        ("not_a_tensor", r"ampkit.layer_norm_forward: x: expected a tensor"),
    ],
)
def test_bad_tensors_raise_value_error_and_leave_outputs_untouched(case, pattern):
    x = torch.randn(4, 16)
    y = _poisoned(4, 16)
    gamma = None
    if case == "dtype":
        x = x.double()
    elif case == "shape":
        y = _poisoned(4, 15)
    elif case == "noncontiguous":
        x = torch.randn(16, 4).T
    elif case == "gamma_dtype":
        x = x.to(torch.bfloat16)
        y = _poisoned(4, 16, dtype=torch.bfloat16)
        gamma = torch.ones(16, dtype=torch.float16)
    elif case == "not_a_tensor":
        x = [[1.0] * 16] * 4
    before = y.clone()
    with pytest.raises(ValueError, match=pattern) as info:
        ampkit._ampkit.layer_norm_forward(x, y, gamma=gamma)
    assert isinstance(info.value, ampkit.InvalidArgumentError)
    assert torch.equal(y, before)
    # the check says the same, without raising
    assert ampkit.layer_norm_forward_check(x, y, gamma=gamma) == str(info.value)


# A raw DLPack capsule made here with ctypes (the ABI of python/src/dlpack_abi.hpp): a tensor
# whose device is a GPU (or another device type), over host memory.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_keep = []


def _capsule(device_type, device_id=0, n=16):
    buf = (ctypes.c_float * n)()
    shape = (ctypes.c_int64 * 1)(n)
    m = _DLManagedTensor()
    m.dl_tensor = _DLTensor(ctypes.cast(buf, ctypes.c_void_p), _DLDevice(device_type, device_id), 1,
                            _DLDataType(2, 32, 1), shape, None, 0)
    m.deleter = None
    _keep.append((buf, shape, m))
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(m), b"dltensor", None)


def test_raw_capsules_are_consumed_once():
    cap = _capsule(1)
    out = ampkit.empty([16], "f32")
    ampkit._ampkit.gelu_forward(cap, out)
    with pytest.raises(ValueError, match="already consumed"):
        ampkit._ampkit.gelu_forward(cap, out)


def test_a_device_ampkit_has_no_backend_for_is_unsupported():
    with pytest.raises(NotImplementedError, match=r"ampkit.gelu_forward: x: expected a cpu or cuda tensor"):
        ampkit._ampkit.gelu_forward(_capsule(7), ampkit.empty([16], "f32"))  # kDLVulkan


def test_wrong_device_gives_ampkits_error():
    # x claims to be GPU memory: without a usable GPU ampkit says it cannot run (unsupported);
    # with one, that the pointer is not device memory (invalid argument). Both name the call.
    y = ampkit.empty([16], "f32")
    with pytest.raises(ampkit.Error) as info:
        ampkit._ampkit.gelu_forward(_capsule(2), y)
    if ampkit.cuda_device_count() == 0:
        assert isinstance(info.value, (ampkit.UnsupportedError, ampkit.InvalidArgumentError))
    assert "gelu" in str(info.value)
