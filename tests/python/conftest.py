# pytest setup of tests/python/ (run by CTest as `python_tests`, PYTHONPATH=<build>/python).
# The torch tests skip, saying so, where torch is not installed; the numpy ones likewise.
import pytest

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
try:
    import numpy  # noqa: F401
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (Debian: python3-torch)")
needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="numpy is not installed (Debian: python3-numpy)")
