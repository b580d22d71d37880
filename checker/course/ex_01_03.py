"""The exercises of spec chapters 01 (key), 02 (expansion) and 03 (outlining), each checked by
running fxoracle's own code on the exercise's graph (`fxoracle course check`)."""

from __future__ import annotations

from collections import deque

import torch
import torch.fx

from checker.course.marking import CORPUS, Answer, Exercise, Mark, Marking, names_of, same
from checker.io.model_file import load_model_file
from checker.tools.refusals import key_differences
from reference.dynamo.capture import capture
from reference.errors import FxOracleError
from reference.expand.lockstep import GraphView, expand
from reference.expand.regions import find_identical_regions, search_regions
from reference.fx_helpers import NodeIndex
from reference.pipeline import deduplicate
from reference.replace.cycle import Contraction
from reference.track.keys import current_global_state, node_key, value_key
from reference.track.offline import track_graph

# ---- 01 the key -------------------------------------------------------------------------------
PAIRS = {
    "0.0/-0.0": (0.0, -0.0),
    "1/True": (1, True),
    "(1, 2)/[1, 2]": ((1, 2), [1, 2]),
    "torch.float32/torch.float": (torch.float32, torch.float),
}


def check_01_1(answer: Answer) -> Marking:
    said = answer.chosen("EQUAL_KEYS", PAIRS)
    marks = []
    for label, (a, b) in PAIRS.items():
        ka, kb = value_key(a), value_key(b)
        left, right = label.split("/")
        rule = (
            f"a constant's key is its type and its value as written (repr; a sequence: its "
            f"kind and items), TRK-5: check type() and repr() of {left} and of {right}"
        )
        shown = f"their keys are {ka} and {kb}"
        marks.append(same(f"{label!r} in EQUAL_KEYS", label in said, ka == kb, rule, shown=shown))
    return Marking(tuple(marks))


def _sin_twice(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + torch.sin(y)


def check_01_2(answer: Answer) -> Marking:
    c = capture(_sin_twice, (torch.ones(3), torch.ones(3)))
    first, second = (n for n in c.gm.graph.nodes if n.target is torch.sin)
    live, offline = c.tracker.node_to_key, track_graph(c.gm.graph).node_to_key
    diff = key_differences(live[first], live[second])
    live_why = f"live, the keys differ in {_values(diff)}"
    offline_why = "offline, a call site is stack_trace's file and line, without the offset"
    return Marking(
        (
            same(
                "LIVE_SAME_KEY",
                answer.flag("LIVE_SAME_KEY"),
                not diff,
                "live, a call site is the file, the line and the bytecode offset (TRK-3)",
                shown=live_why,
            ),
            same(
                "OFFLINE_SAME_KEY",
                answer.flag("OFFLINE_SAME_KEY"),
                offline[first] == offline[second],
                offline_why,
            ),
        )
    )


def _values(diff: list[tuple[str, object, object]]) -> str:
    return "; ".join(f"{path} {a!r} vs {b!r}" for path, a, b in diff) or "none"


def check_01_3(answer: Answer) -> Marking:
    g = torch.fx.Graph()
    node = g.call_function(torch.mul, (g.placeholder("x"), 2))
    grad = node_key(node, current_global_state(), None)
    with torch.no_grad():
        no_grad = node_key(node, current_global_state(), None)
    diff = key_differences(grad, no_grad)
    truth = diff[0][0] if len(diff) == 1 else _values(diff)
    why = f"node_key differs in {_values(diff)}"
    rule = "node_key reads the global state when it keys (TRK-2): print both keys' fields"
    return Marking(
        (same("DIFFERING_FIELD", answer.text("DIFFERING_FIELD"), truth, rule, shown=why),)
    )


# ---- 02 expansion ------------------------------------------------------------------------------
def _sin_or_tanh(x: torch.Tensor) -> torch.Tensor:
    outs = []
    for f in (torch.sin, torch.tanh):
        outs.append(f(x) + torch.cos(x))
    return outs[0] * outs[1]


def _kept_candidates(
    view: GraphView, roots: list[NodeIndex]
) -> tuple[list[tuple[str, ...]], list[list[str]]]:
    """The steps of a broken lock-step in which a refused candidate stays in its queue for
    the next step (only region 0, which drives, pops); all join when their keys agree. Also
    the regions it grows."""
    queues = [deque(view.args[r]) for r in roots]
    regions = [[view.names[r]] for r in roots]
    steps: list[tuple[str, ...]] = []
    while queues[0]:
        heads = [q[0] for q in queues if q]
        steps.append(tuple(view.names[c] for c in heads))
        buckets = {view.bucket_of[c] for c in heads}
        inputs = any(view.ops[c] in ("placeholder", "get_attr") for c in heads)
        if len(heads) == len(queues) and len(buckets) == 1 and None not in buckets and not inputs:
            for q, c, region in zip(queues, heads, regions, strict=True):
                q.popleft()
                q.extend(view.args[c])
                region.append(view.names[c])
        else:
            queues[0].popleft()
    return steps, regions


# what goes wrong when a refusing region keeps its candidate (02.1)
GOES_WRONG = {
    "nothing": "the same regions grow, one step later",
    "misaligned": "the queues fall out of step and corresponding nodes never meet: less grows",
    "merged": "nodes with different keys end up at one position",
}


def _goes_wrong(real: list[list[str]], broken: list[list[str]], view: GraphView) -> str:
    if sorted(map(sorted, real)) == sorted(map(sorted, broken)):
        return "nothing"
    index = {name: i for i, name in enumerate(view.names)}
    positions = zip(*broken, strict=True)
    mixed = any(len({view.bucket_of[index[n]] for n in at}) > 1 for at in positions)
    return "merged" if mixed else "misaligned"


def check_02_1(answer: Answer) -> Marking:
    c = capture(_sin_or_tanh, (torch.ones(3),))
    search = search_regions(c.gm.graph, c.tracker.buckets())
    view = search.view
    group = expand(view).groups[0]
    real = [tuple(view.names[n] for n in s.candidates if n is not None) for s in group.steps]
    roots = [r[-1] for r in group.regions]
    broken, grown = _kept_candidates(view, roots)
    regions = [[view.names[n] for n in r] for r in group.regions]
    wrong = _goes_wrong(regions, grown, view)
    pops = "every queue pops once per step, the refused candidates too (EXP-3): follow each "
    pops += "region's queue (its root's arguments, in order) past step 1"
    kept = "a region that keeps its refused candidate offers it again at step 2, while region "
    kept += "0 moves on to its next one"
    said = answer.choice("WHAT_GOES_WRONG", GOES_WRONG)
    rule = f"that is: {GOES_WRONG[said]}; EXP-3 and EXP-6: a step joins only "
    rule += "candidates with region 0's key: play your STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE "
    rule += "forward to the end and compare what grows with the real lock-step's regions"
    return Marking(
        (
            same(
                "STEP_2",
                tuple(answer.names("STEP_2")),
                real[1],
                pops,
                shown=f"the lock-step compares {real}",
            ),
            same(
                "STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE",
                tuple(answer.names("STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE")),
                broken[1],
                kept,
                shown=f"with kept candidates the steps compare {broken}",
            ),
            same(
                "WHAT_GOES_WRONG",
                said,
                wrong,
                rule,
                shown=f"kept candidates grow {grown}, the lock-step {regions}",
            ),
        )
    )


def check_02_2(answer: Answer) -> Marking:
    gm = answer.function("build")()
    if not isinstance(gm, torch.fx.GraphModule):
        raise FxOracleError(f"{answer.where}: build() must return a GraphModule, not {gm!r}")
    groups = find_identical_regions(gm.graph, track_graph(gm.graph))
    if not groups:
        why = "expansion finds no region group in it: repeat a computation (same op, target and "
        return Marking((Mark("a group", False, why + "argument metadata) at least twice"),))
    for group in groups:
        alone = all(Contraction(gm.graph, {}).cycle([r]) is None for r in group)
        together = Contraction(gm.graph, {}).cycle(group)
        if alone and together is not None:
            why = f"each region of {_regions(group)} is safe alone; all: {together.path}"
            return Marking((Mark("regions safe alone, not together", True, why),))
    first = groups[0]
    alone = all(Contraction(gm.graph, {}).cycle([r]) is None for r in first)
    why = "a region alone closes a cycle" if not alone else "contracting all closes no cycle"
    return Marking((Mark("regions safe alone, not together", False, f"{_regions(first)}: {why}"),))


def _regions(group: list[list[torch.fx.Node]]) -> str:
    return "[" + ", ".join("[" + ", ".join(names_of(r)) + "]" for r in group) + "]"


# ---- 03 outlining ------------------------------------------------------------------------------
def check_03_1(answer: Answer) -> Marking:
    b3 = load_model_file(CORPUS / "b3_shared_input.py")
    inputs = b3.example_inputs
    c = capture(b3.model, inputs)
    result = deduplicate(c.gm, c.tracker)
    body = result.subgraphs["subgraph_0"]
    slots = sum(n.op == "placeholder" for n in body.graph.nodes)
    refused = {r.region: r.id for r in result.refused if r.region is not None}
    equal = all(torch.equal(a, b) for a, b in zip(c.gm(*inputs), b3.model(*inputs), strict=True))
    rules = "which regions RPL-2 (one placeholder per usage class) and RPL-8 (no shared storage)"
    return Marking(
        (
            same(
                "PLACEHOLDERS",
                answer.number("PLACEHOLDERS"),
                slots,
                "region 1 passes y and z where region 0 passes x twice: two usage classes (RPL-2)",
            ),
            same(
                "REPLACED",
                answer.numbers("REPLACED"),
                tuple(r.region for r in result.replaced),
                f"{rules} let through: `fxoracle verify tests/corpus/b3_shared_input.py` shows it",
            ),
            same(
                "REFUSED",
                dict(answer.raw("REFUSED", dict, "a dict region -> id")),
                refused,
                f"{rules} let through: `fxoracle verify tests/corpus/b3_shared_input.py` shows it",
            ),
            same(
                "SAME_RESULT",
                answer.flag("SAME_RESULT"),
                equal,
                "the deduplicated module run on the same inputs (RPL-13)",
            ),
        )
    )


def check_03_2(answer: Answer) -> Marking:
    d1 = load_model_file(CORPUS / "d01_single_subgraph.py")
    c = capture(d1.model, d1.example_inputs)
    deduplicate(c.gm, c.tracker)
    code = c.gm.code
    second = deduplicate(c.gm, c.tracker)
    why = "the replaced regions' nodes are erased, so no region is found again (RPL-15)"
    return Marking(
        (
            same(
                "SECOND_RUN_REPLACES",
                answer.number("SECOND_RUN_REPLACES"),
                len(second.replaced),
                why,
            ),
            same("CODE_CHANGES", answer.flag("CODE_CHANGES"), c.gm.code != code, why),
        )
    )


def _constant_regions(x: torch.Tensor) -> torch.Tensor:
    outs = []
    for _ in range(2):
        outs.append(torch.ones(3).sin().cos())
    return x + outs[0] * outs[1]


def check_03_3(answer: Answer) -> Marking:
    c = capture(_constant_regions, (torch.rand(3),))
    groups = [[list(names_of(r)) for r in g] for g in find_identical_regions(c.gm.graph, c.tracker)]
    result = deduplicate(c.gm, c.tracker)
    refusals = [r.id for r in result.refused]
    why = "; ".join(str(r.reason) for r in result.refused) or "nothing is refused"
    return Marking(
        (
            same(
                "REGIONS",
                answer.raw("REGIONS", list, "a list of regions (lists of names)"),
                groups[0] if groups else [],
                "find_identical_regions on the captured graph",
            ),
            same("INSTALLED", answer.names("INSTALLED"), tuple(result.subgraphs), why),
            same("REFUSAL", answer.text("REFUSAL"), refusals[0] if refusals else "", why),
        )
    )


EXERCISES = (
    Exercise(
        "01.1",
        ("TRK-5",),
        "EQUAL_KEYS: set of pair labels, from " + ", ".join(repr(p) for p in PAIRS),
        check_01_1,
    ),
    Exercise(
        "01.2", ("TRK-3", "TRK-10"), "LIVE_SAME_KEY: bool\nOFFLINE_SAME_KEY: bool", check_01_2
    ),
    Exercise(
        "01.3",
        ("TRK-2",),
        "DIFFERING_FIELD: str, a field path such as 'call_site.line'",
        check_01_3,
    ),
    Exercise(
        "02.1",
        ("EXP-3", "EXP-6"),
        "STEP_2: tuple of node names\nSTEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE: tuple of node names"
        "\nWHAT_GOES_WRONG: one of " + ", ".join(repr(k) for k in GOES_WRONG),
        check_02_1,
    ),
    Exercise("02.2", ("EXP-8", "RPL-25"), "def build() -> torch.fx.GraphModule", check_02_2),
    Exercise(
        "03.1",
        ("RPL-2", "RPL-8", "RPL-13"),
        "PLACEHOLDERS: int\nREPLACED: list of region "
        "numbers\nREFUSED: dict region -> id ('RPL-n')\nSAME_RESULT: bool",
        check_03_1,
    ),
    Exercise("03.2", ("RPL-15",), "SECOND_RUN_REPLACES: int\nCODE_CHANGES: bool", check_03_2),
    Exercise(
        "03.3",
        ("RPL-5",),
        "REGIONS: list of lists of node names (region 0, region 1)\n"
        "INSTALLED: list of subgraph names\nREFUSAL: str, the id ('RPL-n')",
        check_03_3,
    ),
)
