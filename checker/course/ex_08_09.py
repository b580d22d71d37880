"""The exercises of spec chapters 08 (the oracle) and 09 (effects), each checked by running
fxoracle's own code on the exercise's models (`fxoracle course check`)."""

from __future__ import annotations

import operator

import torch
import torch.fx

from checker.course.marking import CORPUS, Answer, Exercise, Mark, Marking, same
from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame
from checker.oracle.compare.meaning import Interner, meaning
from checker.oracle.diff.driver import run_diff
from checker.oracle.sides.sides import COMPONENTS
from reference.dynamo.capture import capture
from reference.effects.alias_db import AliasDB
from reference.policy import Policy
from reference.sort.deps import OrderingDeps

EXAMPLE = "checker.oracle.plugins.example:Example"
PARTS = tuple(str(c) for c in COMPONENTS)


# ---- 08 oracle --------------------------------------------------------------------------------
def check_08_1(answer: Answer) -> Marking:
    report = run_diff([load_model_file(CORPUS / "d15_mutation_ordering.py")], EXAMPLE)
    found = [d for g in report.graphs for d in g.divergences]
    blamed = sorted({str(d.blame) for d in found}) or ["no divergence"]
    return Marking(
        (
            same(
                "COMPARED",
                answer.chosen("COMPARED", PARTS),
                frozenset(map(str, report.components)),
                "only the parts both sides implement are compared (DIF-1)",
            ),
            same(
                "SKIPPED",
                answer.chosen("SKIPPED", PARTS),
                frozenset(map(str, report.skipped)),
                "the report lists the parts the plug-in does not implement (DIF-1)",
            ),
            same(
                "FAILS",
                answer.flag("FAILS"),
                report.fails,
                "a run fails only on a difference it blames on a side (DIF-3, DIF-4)",
                shown=f"blame: {', '.join(blamed)}; a valid other order is a free choice",
            ),
        )
    )


def check_08_2(answer: Answer) -> Marking:
    answer.raw("DropsDeadNodes", type, "a class with a stable_sort method")
    against = f"{answer.module}:DropsDeadNodes"
    model = load_model_file(CORPUS / "own_inplace_inside.py")
    found = run_diff([model], against, "sort").graphs[0].divergences
    blamed = [d for d in found if d.blame is Blame.OTHER]
    if not blamed:
        why = "the oracle blames your sort nowhere: does it erase the nodes nobody uses?"
        return Marking((Mark("your planted bug is caught", False, why),))
    detail = blamed[0].detail
    erased = detail.split(" nodes ", 1)[1].split(";")[0] if " nodes " in detail else ""
    dead = frozenset(part.strip() for part in erased.split(",") if part.strip())
    return Marking(
        (
            Mark("your planted bug is caught", True, f"blamed on your plug-in: {detail}"),
            same("KIND", answer.text("KIND"), str(blamed[0].kind), "the kind the oracle reports"),
            same("DEAD", frozenset(answer.names("DEAD")), dead, "the nodes the detail names"),
        )
    )


def _graph(update_first: bool, independent: bool = False) -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    if independent:
        first, second = (torch.sin, x), (torch.cos, y)
        a, b = (first, second) if update_first else (second, first)
        n1, n2 = g.call_function(a[0], (a[1],)), g.call_function(b[0], (b[1],))
        g.output((n1, n2) if update_first else (n2, n1))
    elif update_first:
        g.call_method("add_", (x, 1))
        g.output(g.call_function(operator.add, (g.call_function(torch.sin, (x,)), x)))
    else:
        s = g.call_function(torch.sin, (x,))
        g.call_method("add_", (x, 1))
        g.output(g.call_function(operator.add, (s, x)))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def check_08_3(answer: Answer) -> Marking:
    interner = Interner()
    moved = meaning(_graph(False), interner) == meaning(_graph(True), interner)
    swapped = meaning(_graph(True, True), interner) == meaning(_graph(False, True), interner)
    return Marking(
        (
            same(
                "UPDATE_MOVED_SAME_MEANING",
                answer.flag("UPDATE_MOVED_SAME_MEANING"),
                moved,
                "a read after a write of its storage reads another version of it (DIF-3)",
            ),
            same(
                "INDEPENDENT_SWAPPED_SAME_MEANING",
                answer.flag("INDEPENDENT_SWAPPED_SAME_MEANING"),
                swapped,
                "nodes with no effect between them may run in any order (DIF-3)",
            ),
        )
    )


# ---- 09 effects -------------------------------------------------------------------------------
def _views_then_update(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    v = h.view(-1)
    s = h[0]
    h.add_(1)
    y = v * 2
    return y.sum() + s.sum()


def check_09_1(answer: Answer) -> Marking:
    c = capture(_views_then_update, (torch.randn(2, 3),))
    db = AliasDB(c.gm.graph)
    h = db.classes(next(n for n in c.gm.graph.nodes if n.name == "h"))
    sharing = frozenset(n.name for n in c.gm.graph.nodes if db.classes(n) == h)
    new = OrderingDeps.from_graph(c.gm.graph).as_mapping()
    old = OrderingDeps.from_graph(c.gm.graph, policy=Policy(order_aliases=False)).as_mapping()
    edges = {f"{k.name} after {d.name}" for k, v in new.items() for d in v}
    torch_edges = {f"{k.name} after {d.name}" for k, v in old.items() for d in v}
    return Marking(
        (
            same(
                "SHARE_H_STORAGE",
                frozenset(answer.names("SHARE_H_STORAGE")),
                sharing,
                "a view, and an in-place op's result, live in the storage of its base (EFF-2)",
            ),
            same(
                "SRT12_ONLY",
                frozenset(answer.names("SRT12_ONLY")),
                frozenset(edges - torch_edges),
                "SRT-6 orders the write against direct users of h only; SRT-12 every access",
            ),
        )
    )


def _chunk_then_update(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    a, b = h.chunk(2)
    b.mul_(2)
    z = a + 1
    return z


def check_09_2(answer: Answer) -> Marking:
    c = capture(_chunk_then_update, (torch.randn(4, 3),))
    n = {node.name: node for node in c.gm.graph.nodes}
    follows = n["mul_"] in OrderingDeps.from_graph(c.gm.graph).deps_of(n["z"])
    db = AliasDB(c.gm.graph)
    one = db.classes(n["a"]) == db.classes(n["b"]) == db.writes(n["mul_"])
    why = (
        "a and b view one storage: one class, although they do not overlap; mul_ writes it"
        if one
        else "a and b are in different storage classes"
    )
    return Marking((same("Z_FOLLOWS_MUL_", answer.flag("Z_FOLLOWS_MUL_"), follows, why),))


EXERCISES = (
    Exercise(
        "08.1",
        ("DIF-1", "DIF-3"),
        "COMPARED, SKIPPED: sets of component names (" + ", ".join(PARTS) + ")\nFAILS: bool",
        check_08_1,
    ),
    Exercise(
        "08.2",
        ("DIF-4", "DIF-12"),
        "class DropsDeadNodes: a plug-in whose stable_sort "
        "also erases the nodes nobody uses\nKIND: str, the divergence's kind\n"
        "DEAD: set of node names it erased",
        check_08_2,
    ),
    Exercise(
        "08.3",
        ("DIF-3",),
        "UPDATE_MOVED_SAME_MEANING: bool\nINDEPENDENT_SWAPPED_SAME_MEANING: bool",
        check_08_3,
    ),
    Exercise(
        "09.1",
        ("EFF-5", "EFF-6", "SRT-12"),
        "SHARE_H_STORAGE: set of node names\nSRT12_ONLY: set of edges written 'node after dep'",
        check_09_1,
    ),
    Exercise("09.2", ("EFF-5", "SRT-12"), "Z_FOLLOWS_MUL_: bool", check_09_2),
)
