"""CHK-19: the numbers' tolerance is made for the dtype, the device and torch's TF32 flags (spec
chapter 06; `checker.proof.runs.tolerance_for`). CPU tensors stand in for CUDA ones: the rule is
a function of the dtype, whether the value is on CUDA, the TF32 flags and the magnitude."""

from __future__ import annotations

import pytest
import torch

from checker.proof.runs import tf32_in_use, tolerance, tolerance_for
from reference.track.keys import current_global_state
from tests.support.tf32 import precisions, tf32_flags

pytestmark = pytest.mark.spec("CHK-19")


@pytest.mark.parametrize(
    ("dtype", "on_cuda", "tf32", "expected"),
    [
        (torch.float32, False, True, (1.3e-6, 1e-5)),  # the CPU never computes in TF32
        (torch.float32, True, False, (1.3e-6, 1e-5)),  # CUDA, TF32 off: CHK-16's
        (torch.float32, True, True, (1e-3, 1e-3)),  # TF32: float16's rtol, atol at least it
        (torch.complex64, True, True, (1e-3, 1e-3)),
        (torch.float64, True, True, (1e-7, 1e-7)),  # TF32 touches only float32
        (torch.bfloat16, False, False, (1.6e-2, 1e-5)),
        (torch.bfloat16, True, False, (1.6e-2, 1.6e-2)),
        (torch.float16, False, False, (1e-3, 1e-5)),
        (torch.float16, True, True, (1e-3, 1e-3)),
        (torch.int64, True, True, (0.0, 0.0)),
        (torch.bool, False, False, (0.0, 0.0)),
    ],
)
def test_chk19_tolerance_per_dtype_and_device(
    dtype: torch.dtype, on_cuda: bool, tf32: bool, expected: tuple[float, float]
) -> None:
    assert tolerance_for(dtype, on_cuda, tf32, 1.0) == expected
    rtol, atol = expected
    assert tolerance_for(dtype, on_cuda, tf32, 300.0) == (rtol, atol * 300.0)


def test_chk19_tf32_is_read_from_torchs_flags() -> None:
    with tf32_flags("highest", False):
        assert not tf32_in_use()
        torch.backends.cuda.matmul.allow_tf32 = True
        assert tf32_in_use() and torch.get_float32_matmul_precision() == "high"
        torch.backends.cuda.matmul.allow_tf32 = False
    for matmul, cudnn in (("high", False), ("medium", False), ("highest", True)):
        with tf32_flags(matmul, cudnn):
            assert tf32_in_use(), (matmul, cudnn)


def test_chk19_cpu_tensors_keep_chk16_whatever_the_flags() -> None:
    with tf32_flags("high", True):
        assert tolerance(torch.full((3,), 200.0)) == (1.3e-6, 1e-5 * 200.0)
        assert tolerance(torch.ones(3, dtype=torch.bfloat16)) == (1.6e-2, 1e-5)


def _as_tf32(x: torch.Tensor) -> torch.Tensor:
    """`x` with its mantissa cut to TF32's 10 bits, as a TF32 matmul reads its operands."""
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


def test_chk19_a_tf32_matmul_is_within_the_tf32_tolerance_and_not_chk16s() -> None:
    """An fp32 matmul whose operands are cut to TF32 (what cuBLAS does with TF32 on) differs
    from the full fp32 one by more than CHK-16 allows, and less than CHK-19's TF32 rule; a
    wrong constant (x 1.01) is still caught."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 256, generator=g), torch.randn(256, 64, generator=g)
    full, cut = a @ b, _as_tf32(a) @ _as_tf32(b)
    scale = float(full.abs().max())
    rtol, atol = tolerance_for(torch.float32, True, True, scale)
    torch.testing.assert_close(cut, full, rtol=rtol, atol=atol)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(cut, full, rtol=1.3e-6, atol=1e-5 * scale)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(full * 1.01, full, rtol=rtol, atol=atol)


def _precisions() -> tuple[object, ...]:
    """The precisions and both flags."""
    flags = torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32
    return precisions(), *flags


def test_chk19_the_tests_flags_leave_torch_as_they_found_it() -> None:
    """Every precision and flag is back, the node keys too (TRK-2), and torch can read its flag:
    it raises where the flags and the precisions disagree, as Dynamo's capture then would."""
    before, keys = _precisions(), current_global_state()
    with tf32_flags("high", False):
        assert _precisions() != before
    assert _precisions() == before and current_global_state() == keys
    assert isinstance(torch.backends.cuda.matmul.allow_tf32, bool)
