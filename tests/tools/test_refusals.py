"""`fxoracle explain` says what differs on every refusal (chapter 02, EXP-10): the key field
and both values for EXP-6, the owner of a claimed node for EXP-4, the other region for EXP-7,
the node's kind for EXP-5, the outside reader for EXP-8."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from checker.tools.explain import lesson_of, render_text
from checker.tools.refusals import key_differences
from reference.dynamo.capture import capture
from reference.track.keys import Const, Seq, value_key

pytestmark = pytest.mark.filterwarnings("ignore")


class _Norms(torch.nn.Module):
    """Three residual blocks whose LayerNorms differ only in `eps` (the second one)."""

    def __init__(self) -> None:
        super().__init__()
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(8, eps=e) for e in (1e-5, 1e-6, 1e-5))
        self.lins = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for norm, lin in zip(self.norms, self.lins, strict=True):
            x = lin(norm(x)).relu() + x
        return x


def _shared(x: torch.Tensor) -> torch.Tensor:
    y = torch.sin(x)
    outs = [torch.cos(y * 2) for _ in range(2)]
    return outs[0] + outs[1]


def _steps(model: Callable[..., torch.Tensor], *inputs: torch.Tensor) -> list[str]:
    c = capture(model, inputs)
    return render_text(lesson_of("m", c)).splitlines()


def test_exp10_an_exp6_refusal_names_the_key_field_and_both_values() -> None:
    lines = _steps(_Norms(), torch.randn(2, 8))
    refused = [ln for ln in lines if "EXP-6" in ln]
    assert refused and all("key field args[4].value is" in ln for ln in refused), lines
    assert any("'1e-05'" in ln and "'1e-06'" in ln for ln in refused)


def test_exp10_every_refusal_names_what_differs() -> None:
    lines = [ln for ln in _steps(_shared, torch.randn(4)) + _steps(_Norms(), torch.randn(2, 8))
             if "refused by region" in ln]  # fmt: skip
    assert lines and all(ln.endswith(")") and " (" in ln for ln in lines), lines
    said = " ".join(lines)
    assert "is also region 0's candidate" in said  # EXP-7, the shared sin
    assert "outside the region, which feeds" in said  # EXP-8
    assert "(a placeholder)" in said  # EXP-5


def _reads_input_twice(x: torch.Tensor) -> torch.Tensor:
    """`x + 1` then `x.add_(...)` twice, once on the input itself: region 0's candidate `x`."""
    outs = []
    for t in (x, x.clone()):
        t.add_(t + 1)
        outs.append(t.sum())
    return outs[0] + outs[1]


@pytest.mark.spec("EXP-8")
def test_exp8_refusal_of_a_graph_input_says_exp5_refuses_it_too() -> None:
    """Region 0's cycle test runs first (EXP-3), so a placeholder can be refused for EXP-8."""
    lines = [ln for ln in _steps(_reads_input_twice, torch.randn(4)) if "EXP-8" in ln]
    assert lines and all(
        ln.endswith("; it is a placeholder, which EXP-5 refuses too)") for ln in lines
    )


def test_key_differences_are_field_paths_with_both_values() -> None:
    a, b = value_key((1, 0.5)), value_key((1, 2.0))
    assert isinstance(a, Seq) and a.items[1] == Const("float", "0.5")
    assert key_differences(a, b) == [("items[1].value", "0.5", "2.0")]
    assert key_differences(value_key((1,)), value_key([1])) == [("kind", "tuple", "list")]
    assert key_differences(a, a) == []
