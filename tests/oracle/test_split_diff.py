"""Differential tests: the reference split_module against torch's, on Dynamo graphs, times
policies, times options (spec chapter 05, SPL).

Where torch succeeds with the order the reference also uses, both must build the same modules
(node by node) and compute the same results. Where torch raises a KeyError or uses an order
that changes a grad mode (B6, B7, B9 and the other Upstream notes), the reference must compute
what the unsplit graph does. Where torch refuses the input (cycle, decreasing ids with global
state), the reference raises `FxOracleError` with torch's message inside.
"""

from __future__ import annotations

from typing import Any

import pytest
from torch.fx.passes.split_module import split_module as torch_split

from reference.errors import FxOracleError
from reference.split import split_module
from reference.split.plan import plan_split
from reference.torch_version import TORCH
from tests.support.split_cases import (
    Captured,
    Policy,
    assert_same_results,
    by_first_input,
    callback,
    captured_cases,
    contiguous,
    every,
    module_form,
    round_robin,
    seeded,
)

POLICIES: dict[str, Policy] = {
    "contiguous3": contiguous(3),
    "every2": every(2),
    "every5": every(5),
    "round_robin2": round_robin(2),
    "round_robin3": round_robin(3),
    "seeded_3": seeded(1, 3),
    "seeded_2": seeded(5, 2),
    "seeded_monotonic": seeded(2, 4, monotonic=True),
    "by_first_input": by_first_input,
}

OPTIONS: list[dict[str, Any]] = [
    {},
    {"keep_original_order": True},
    {"keep_original_node_name": True, "tuple_return": True},
    {"keep_original_input_name": False, "partition_affix": "pp"},
    {"keep_original_order": True, "keep_original_node_name": True},
    {"keep_original_order": True, "keep_original_input_name": False, "tuple_return": True},
]
if not TORCH.split_tuple_return:  # torch 2.11's split_module has no tuple_return to compare
    OPTIONS = [o for o in OPTIONS if "tuple_return" not in o]


@pytest.fixture(scope="module")
def cases() -> dict[str, Captured]:
    return {c.name: c for c in captured_cases()}


CASE_NAMES = [
    "mlp",
    "mlp_dyn",
    "attention",
    "attention_dyn",
    "tuples",
    "state",
    "state_dyn",
    "sizes_dyn",
    "branches",
]


def check_against_torch(case: Captured, ids: dict[str, int], options: dict[str, Any]) -> str:
    """Split with both; assert the verdict's obligations; return the verdict for counting."""
    original = case.gm(*case.inputs)
    try:
        expected = torch_split(case.gm, case.gm, callback(ids), **options)
    except KeyError:  # torch crashes (B7, B9, affix with global state): we must be right
        split = split_module(case.gm, None, callback(ids), **options)
        assert_same_results(original, split(*case.inputs))
        return "torch crashes"
    except (AssertionError, RuntimeError) as refused:
        with pytest.raises(FxOracleError) as ours:
            split_module(case.gm, None, callback(ids), **options)
        assert str(refused) in str(ours.value)
        return "both refuse"
    split = split_module(case.gm, None, callback(ids), **options)
    plan = plan_split(case.gm, callback(ids), bool(options.get("keep_original_order")))
    assert_same_results(original, split(*case.inputs))
    if plan.order != plan.upstream_order:  # B6: torch's order changes a grad mode
        return "torch reordered"
    assert module_form(split) == module_form(expected)
    assert_same_results(expected(*case.inputs), split(*case.inputs))
    return "same"


@pytest.mark.torch_diff
@pytest.mark.spec("SPL-2", "SPL-3", "SPL-4", "SPL-5", "SPL-7", "SPL-12", "SPL-13")
@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_split_matches_torch(cases: dict[str, Captured], case_name: str, policy: str) -> None:
    case = cases[case_name]
    ids = POLICIES[policy](case.gm)
    verdicts = [check_against_torch(case, ids, options) for options in OPTIONS]
    if policy in ("contiguous3", "every2", "every5") and not case.has_state:
        assert set(verdicts) == {"same"}


@pytest.mark.torch_diff
@pytest.mark.spec("SPL-8", "SPL-10")
def test_verdicts_cover_every_outcome(cases: dict[str, Captured]) -> None:
    """The corpus reaches every branch of the comparison, so no branch is vacuous."""
    seen = {
        check_against_torch(cases[name], POLICIES[policy](cases[name].gm), options)
        for name, policy, options in [
            ("branches", "by_first_input", {"keep_original_order": True}),  # B7
            ("state", "round_robin2", {}),  # B8
            ("mlp", "round_robin2", {}),  # cycle
            ("state", "every2", {}),  # B6
            ("mlp", "every2", {}),
        ]
    }
    assert seen == {"torch crashes", "both refuse", "torch reordered", "same"}


@pytest.mark.torch_diff
@pytest.mark.spec("SPL-3", "SPL-6")
@pytest.mark.skipif(not TORCH.split_module_simple, reason="new in torch 2.13")
@pytest.mark.parametrize("case_name", ["mlp", "mlp_dyn", "attention_dyn", "tuples", "sizes_dyn"])
@pytest.mark.parametrize("policy", ["contiguous3", "every2", "every5"])
def test_split_matches_split_module_simple(
    cases: dict[str, Captured], case_name: str, policy: str
) -> None:
    """On inference graphs with monotonic policies, split_module_simple agrees with us."""
    from torch.fx.passes.split_module import split_module_simple

    case = cases[case_name]
    ids = POLICIES[policy](case.gm)
    mapping = {n: ids[n.name] for n in case.gm.graph.nodes if n.name in ids}
    simple = split_module_simple(case.gm, mapping, partition_affix="s")
    ours = split_module(case.gm, None, callback(ids), keep_original_order=True, partition_affix="s")
    assert module_form(ours) == module_form(simple)
    assert_same_results(simple(*case.inputs), ours(*case.inputs))
