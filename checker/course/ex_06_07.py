"""The exercises of spec chapters 06 (the checker) and 07 (shapes), each checked by running
fxoracle's own code on the exercise's graph or query (`fxoracle course check`)."""

from __future__ import annotations

import sympy
import torch
import torch.fx
from torch.utils._sympy.functions import FloorDiv, PythonMod

from checker.course.marking import CORPUS, Answer, Exercise, Mark, Marking, same
from checker.io.model_file import load_model_file
from checker.proof.check import check_transformation
from checker.proof.report import ACYCLIC, ORDERING, Report
from checker.proof.shapes import (
    ShapeFacts,
    SymbolRange,
    prove_equal,
    prove_sizes_equal,
    z3_value_at,
)
from checker.proof.verdict import Unknown, Violated
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.split import split_module

GM = torch.fx.GraphModule


# ---- 06 checker -------------------------------------------------------------------------------
def _block(t: torch.Tensor) -> torch.Tensor:
    return torch.relu(t * 1.5) + t


def _blocks(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _block(x) * _block(y)


def worked_example() -> tuple[GM, GM]:
    """Chapter 06's worked example: the original (a copy) and its deduplicated module."""
    c = capture(_blocks, (torch.randn(4), torch.randn(4)))
    original = copy_graph_module(c.gm).gm
    deduplicate(c.gm, c.tracker)
    return original, c.gm


def with_constant(transformed: GM, value: float) -> GM:
    """A copy of `transformed` whose subgraph multiplies by `value` instead of 1.5."""
    planted = copy_graph_module(transformed).gm
    body = planted.get_submodule("subgraph_0")
    assert isinstance(body, GM), "the worked example outlines subgraph_0"
    mul = next(n for n in body.graph.nodes if n.name == "mul")
    mul.args = (mul.args[0], value)
    body.recompile()
    return planted


def _ids(report: Report, unknown: bool = False) -> frozenset[str]:
    return frozenset(o.id for o in (report.unknowns if unknown else report.violations))


def check_06_1(answer: Answer) -> Marking:
    original, transformed = worked_example()
    planted = with_constant(transformed, 1.5 * (1 + 1e-9))
    report = check_transformation(original, planted)
    g = torch.Generator().manual_seed(0)
    inputs = (torch.randn(4, generator=g), torch.randn(4, generator=g))
    diff = max(
        (a - b).abs().max().item() for a, b in zip(original(*inputs), planted(*inputs), strict=True)
    )
    as_f32 = torch.tensor(1.5 * (1 + 1e-9), dtype=torch.float32).item()
    return Marking(
        (
            same(
                "VIOLATED",
                answer.chosen("VIOLATED", _CHK),
                _ids(report),
                "CHK-3 compares constants exactly (repr); CHK-6 runs both modules",
            ),
            same(
                "FLOAT32_CONSTANT",
                answer.real("FLOAT32_CONSTANT"),
                as_f32,
                "torch.tensor(1.5 * (1 + 1e-9), dtype=torch.float32).item(): a float32 has 24 bits",
            ),
            same(
                "LARGEST_OUTPUT_DIFFERENCE",
                answer.real("LARGEST_OUTPUT_DIFFERENCE"),
                diff,
                "both modules run on the same float32 inputs, and the multiply uses the constant "
                "as a float32 (your FLOAT32_CONSTANT)",
                shown=f"the largest difference on seeded inputs is {diff}",
            ),
            *_why_chk6_holds(answer, as_f32 == 1.5, diff),
        )
    )


# why CHK-6 holds on 06.1's planted bug
CHK6_HOLDS_BECAUSE = {
    "tolerance": "the outputs differ, by less than CHK-16's tolerance",
    "rounding": "in float32 the two constants are one number: both modules compute the same bits",
    "inputs": "these random inputs happen to hide a difference other inputs would show",
}


def _why_chk6_holds(answer: Answer, rounds_away: bool, diff: float) -> tuple[Mark, Mark]:
    """06.1's "why" facts: why CHK-6 holds, and whether a zero tolerance would catch the bug."""
    truth = "rounding" if rounds_away and diff == 0 else "tolerance" if diff > 0 else "inputs"
    said = answer.choice("CHK6_HOLDS_BECAUSE", CHK6_HOLDS_BECAUSE)
    rule = (
        f"that is: {CHK6_HOLDS_BECAUSE[said]}; CHK-6 compares outputs computed "
        "in float32: set that against your FLOAT32_CONSTANT and LARGEST_OUTPUT_DIFFERENCE"
    )
    shown = f"{CHK6_HOLDS_BECAUSE[truth]} (the largest difference is {diff})"
    zero = answer.flag("ZERO_TOLERANCE_CATCHES_IT")
    zero_rule = (
        "a zero tolerance (CHK-16 with rtol = atol = 0) flags exactly the outputs that "
        "differ at all: see your LARGEST_OUTPUT_DIFFERENCE"
    )
    return (
        same("CHK6_HOLDS_BECAUSE", said, truth, rule, shown=shown),
        same("ZERO_TOLERANCE_CATCHES_IT", zero, diff > 0, zero_rule),
    )


_CHK = tuple(f"CHK-{n}" for n in (1, 2, 3, 4, 5, 6, 17))
_META = "a meta tensor has a shape but no values: which obligations must run the modules? (CHK-7)"


def check_06_2(answer: Answer) -> Marking:
    original, transformed = worked_example()
    meta = (torch.empty(4, device="meta"), torch.empty(4, device="meta"))
    report = check_transformation(original, transformed, meta)
    why = "; ".join(o.line() for o in report.unknowns) or "nothing is unknown"
    return Marking(
        (
            same("VIOLATED", answer.chosen("VIOLATED", _CHK), _ids(report), _META, shown=why),
            same(
                "UNKNOWN",
                answer.chosen("UNKNOWN", _CHK),
                _ids(report, unknown=True),
                _META,
                shown=why,
            ),
            same("OK", answer.flag("OK"), report.ok, "ok only when every obligation holds (CHK-7)"),
        )
    )


def check_06_3(answer: Answer) -> Marking:
    original, transformed = worked_example()
    n = {node.name: node for node in transformed.graph.nodes}
    report = check_transformation(
        original, transformed, extra_deps={n["invoke_subgraph"]: [n["mul_2"]]}
    )
    verdict = report.verdict_of(ACYCLIC)
    witness = verdict.witness if isinstance(verdict, Violated) else ""
    cycle = tuple(witness.split("cycle ", 1)[1].split(" -> ")) if "cycle " in witness else ()
    return Marking(
        (
            same(
                "VIOLATED", answer.chosen("VIOLATED", _CHK), _ids(report), f"the report: {witness}"
            ),
            same("CYCLE", answer.names("CYCLE"), cycle, "the witness, earliest node first (CHK-2)"),
        )
    )


def check_06_4(answer: Answer) -> Marking:
    info = load_model_file(CORPUS / "own_autocast_back_to_back.py")
    original = capture(info.model, info.example_inputs, info.dynamic).gm
    calls = [n for n in original.graph.nodes if n.op not in ("placeholder", "output")]
    position = {n: i for i, n in enumerate(calls)}
    split = split_module(original, None, position.__getitem__, keep_original_order=False)
    first = next(m for m in split.graph.nodes if m.op == "call_module")
    body = split.get_submodule(str(first.target))
    assert isinstance(body, GM), "split_module makes graph modules"
    runs_first = tuple(n.name for n in body.graph.nodes if n.op.startswith("call"))
    verdict = check_transformation(original, split).verdict_of(ORDERING)
    state = "every partition re-enters the autocast state its nodes ran in (SPL-9)"
    return Marking(
        (
            same("CHK4", answer.text("CHK4"), type(verdict).__name__.lower(), state),
            same(
                "FIRST_PARTITION_NODES",
                answer.names("FIRST_PARTITION_NODES"),
                runs_first,
                "torch's LIFO order pops the last ready root first (SPL-7)",
            ),
        )
    )


# ---- 07 shapes --------------------------------------------------------------------------------
s0 = sympy.Symbol("s0", integer=True)


def check_07_1(answer: Answer) -> Marking:
    nested = prove_equal(FloorDiv(FloorDiv(s0, 2), 3), FloorDiv(s0, 6))
    value = answer.number("S0")
    lhs, rhs = (value // 2) * 3, (value * 3) // 2
    separates = value >= 0 and lhs != rhs
    why = f"at s0 = {value}: (s0 // 2) * 3 = {lhs}, (s0 * 3) // 2 = {rhs}"
    second = prove_equal(FloorDiv(s0, 2) * 3, FloorDiv(s0 * 3, 2))
    z3_s0 = dict(second.model).get("s0") if isinstance(second, Violated) else None
    same_size = (
        "it asks whether the size in z3's model (the Violated verdict's `model`) is "
        "your S0 (SHP-9: a violation carries one model that separates the sides)"
    )
    return Marking(
        (
            same(
                "NESTED_HOLDS",
                answer.flag("NESTED_HOLDS"),
                nested.__class__.__name__ == "Holds",
                "run prove_equal on the two sides and read its verdict (SHP-2: `//` rounds "
                "toward minus infinity)",
                shown=f"prove_equal says {nested}",
            ),
            Mark(
                "S0", separates, why + ("" if separates else ": a size where they differ, please")
            ),
            same(
                "Z3_SAME_SIZE",
                answer.flag("Z3_SAME_SIZE"),
                z3_s0 == value,
                same_size,
                shown=f"z3's model is s0 = {z3_s0}, yours {value}",
            ),
        )
    )


def check_07_2(answer: Answer) -> Marking:
    a, b = sympy.symbols("a b", integer=True)
    floor = z3_value_at(FloorDiv(a, b), {"a": 7, "b": -2})
    mod = z3_value_at(PythonMod(a, b), {"a": 1, "b": -2})
    zero = z3_value_at(FloorDiv(a, b), {"a": 7, "b": 0})
    return Marking(
        (
            same(
                "FLOORDIV_7_BY_MINUS_2",
                answer.number("FLOORDIV_7_BY_MINUS_2"),
                floor,
                "Python rounds toward minus infinity (SHP-2)",
            ),
            same(
                "MOD_1_BY_MINUS_2",
                answer.number("MOD_1_BY_MINUS_2"),
                mod,
                "Python's % takes the divisor's sign (SHP-3)",
            ),
            same(
                "AT_B_ZERO",
                answer.text("AT_B_ZERO"),
                type(zero).__name__ if not isinstance(zero, int) else "a number",
                "a term undefined at the given values is neither true nor false (SHP-5)",
                shown=f"z3_value_at gives {zero} (SHP-5)",
            ),
        )
    )


def check_07_3(answer: Answer) -> Marking:
    facts = answer.raw("FACTS", ShapeFacts, "a ShapeFacts")
    theirs = prove_equal(s0, s0 + 1, facts)
    contradictory = isinstance(theirs, Unknown) and theirs.reason.startswith("SHP-10")
    truth = prove_equal(s0, s0 + 1, ShapeFacts(ranges=(SymbolRange("s0", 5, 3),)))
    lengths = prove_sizes_equal([s0, 2], [s0])
    asked = "" if contradictory else ": facts that admit no s0 at all were asked for"
    return Marking(
        (
            Mark("FACTS", contradictory, f"with your facts prove_equal says {theirs}{asked}"),
            same(
                "VERDICT",
                answer.text("VERDICT"),
                type(truth).__name__,
                "facts that admit no value at all prove nothing and refute nothing (SHP-10)",
                shown=f"prove_equal says {truth}",
            ),
            same(
                "DIFFERENT_LENGTHS",
                answer.text("DIFFERENT_LENGTHS"),
                type(lengths).__name__,
                f"prove_sizes_equal([s0, 2], [s0]) says {lengths}",
            ),
        )
    )


EXERCISES = (
    Exercise(
        "06.1",
        ("CHK-3", "CHK-16"),
        "VIOLATED: set of obligation ids ('CHK-n')\n"
        "FLOAT32_CONSTANT: float\nLARGEST_OUTPUT_DIFFERENCE: float\n"
        "CHK6_HOLDS_BECAUSE: one of " + ", ".join(repr(k) for k in CHK6_HOLDS_BECAUSE) + "\n"
        "ZERO_TOLERANCE_CATCHES_IT: bool",
        check_06_1,
    ),
    Exercise(
        "06.2",
        ("CHK-6", "CHK-7"),
        "VIOLATED, UNKNOWN: sets of obligation ids\nOK: bool",
        check_06_2,
    ),
    Exercise(
        "06.3",
        ("CHK-2",),
        "VIOLATED: set of obligation ids\nCYCLE: list of node names, as the witness prints it",
        check_06_3,
    ),
    Exercise(
        "06.4",
        ("CHK-4", "SPL-9"),
        "CHK4: 'holds', 'violated' or 'unknown'\nFIRST_PARTITION_NODES: list of node names",
        check_06_4,
    ),
    Exercise(
        "07.1",
        ("SHP-2", "SHP-9"),
        "NESTED_HOLDS: bool\nS0: int, a size where the two sides differ\n"
        "Z3_SAME_SIZE: bool, does z3's model name your S0",
        check_07_1,
    ),
    Exercise(
        "07.2",
        ("SHP-2", "SHP-3", "SHP-5"),
        "FLOORDIV_7_BY_MINUS_2: int\nMOD_1_BY_MINUS_2: int\nAT_B_ZERO: the verdict's class name",
        check_07_2,
    ),
    Exercise(
        "07.3",
        ("SHP-10", "SHP-12"),
        "FACTS: a ShapeFacts saying 5 <= s0 <= 3\n"
        "VERDICT, DIFFERENT_LENGTHS: verdict class names ('Holds', 'Violated', 'Unknown')",
        check_07_3,
    ),
)
