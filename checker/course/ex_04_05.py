"""The exercises of spec chapters 04 (sort) and 05 (split), each checked by running
fxoracle's own code on the exercise's graph (`fxoracle course check`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
import torch.fx

from checker.course.marking import Answer, Exercise, Marking, names_of, same
from reference.errors import FxOracleError
from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort
from reference.split import split_module
from reference.split.plan import plan_split

GM = torch.fx.GraphModule
Node = torch.fx.Node


Row = tuple[str, Callable[..., object] | str, tuple[str | int | bool, ...]]


def _graph(*rows: Row, out: tuple[str, ...]) -> GM:
    """A graph of `(name, target, args)` rows over the placeholder `x`; a string target is a
    method; a string argument names an earlier node."""
    g = torch.fx.Graph()
    made: dict[str, Node] = {"x": g.placeholder("x")}
    for name, target, args in rows:
        op = "call_method" if isinstance(target, str) else "call_function"
        values = tuple(made[a] if isinstance(a, str) else a for a in args)
        made[name] = g.create_node(op, target, values, name=name)
    g.output(made[out[0]] if len(out) == 1 else tuple(made[o] for o in out))
    return GM(torch.nn.Module(), g)


def _by_name(gm: GM) -> dict[str, Node]:
    return {n.name: n for n in gm.graph.nodes}


# ---- 04 sort ----------------------------------------------------------------------------------
def check_04_1(answer: Answer) -> Marking:
    gm = _graph(
        ("a", "sin", ("x",)),
        ("add_", "add_", ("x", 1)),
        ("b", "cos", ("x",)),
        ("mul_", "mul_", ("x", 2)),
        ("c", "exp", ("x",)),
        out=("a", "b", "c"),
    )
    n = _by_name(gm)
    deps = OrderingDeps.from_graph(gm.graph, {n["add_"]: [0], n["mul_"]: [0]}).as_mapping()
    given = answer.raw("EXTRA", dict, "a dict node name -> list of node names")
    marks = []
    for name in ("a", "add_", "b", "mul_", "c"):
        truth = names_of(deps.get(n[name], ()))
        mine = given.get(name, [])
        if not isinstance(mine, list | tuple) or not all(isinstance(d, str) for d in mine):
            raise FxOracleError(f"{answer.where}: EXTRA[{name!r}] must be a list of node names")
        why = _srt6_why(name)
        marks.append(same(f"EXTRA[{name!r}]", tuple(mine), truth, why))
    return Marking(tuple(marks))


def _srt6_why(name: str) -> str:
    if name in ("add_", "mul_"):
        return (f"{name} mutates x. Entries are added mutator by mutator, in node order: an "
                "earlier mutator's visit adds itself to every later user of x (this one too); "
                f"then {name}'s visit adds each direct user of x before it, in x.users order; "
                "a node already listed keeps its first place")  # fmt: skip
    return (f"{name} reads x: each mutator of x before it adds itself when that mutator is "
            "visited, in mutator order")  # fmt: skip


def worked_example() -> GM:
    """Chapter 04's worked example in its original order: before, add_, after, out."""
    return _graph(
        ("before", torch.sin, ("x",)),
        ("add_", "add_", ("x", 1)),
        ("after", torch.cos, ("x",)),
        ("out", torch.add, ("before", "after")),
        out=("out",),
    )


def _outline_after(keep_erased_deps: bool) -> tuple[GM, tuple[str, ...]]:
    """`after` replaced by `inv`, a fresh call right after `x`, erased with `redirect`."""
    gm = worked_example()
    n = _by_name(gm)
    deps = OrderingDeps.from_graph(gm.graph, {n["add_"]: [0]})
    with gm.graph.inserting_after(n["x"]):
        inv = gm.graph.create_node("call_function", torch.cos, (n["x"],), name="inv")
    n["after"].replace_all_uses_with(inv)
    gm.graph.erase_node(n["after"])
    deps.redirect(n["after"], inv, keep_erased_deps=keep_erased_deps)
    stable_topological_sort(gm.graph, deps.as_mapping())
    return gm, names_of(deps.deps_of(inv))


def check_04_2(answer: Answer) -> Marking:
    torch_gm, torch_deps = _outline_after(keep_erased_deps=False)
    kept_gm, kept_deps = _outline_after(keep_erased_deps=True)
    drop = "torch's update drops the erased node's own entry (SRT-9)"
    keep = "keep_erased_deps=True hands after's own deps to inv (SRT-10)"
    return Marking(
        (
            same("TORCH_DEPS_OF_INV", answer.names("TORCH_DEPS_OF_INV"), torch_deps, drop),
            same("INHERITED_DEPS_OF_INV", answer.names("INHERITED_DEPS_OF_INV"), kept_deps, keep),
            same(
                "TORCH_ORDER",
                answer.names("TORCH_ORDER"),
                names_of(list(torch_gm.graph.nodes)),
                "with no deps inv is ready at once and keeps its place after x",
            ),
            same(
                "INHERITED_ORDER",
                answer.names("INHERITED_ORDER"),
                names_of(list(kept_gm.graph.nodes)),
                "inv waits on add_, which waits on before",
            ),
        )
    )


def check_04_3(answer: Answer) -> Marking:
    gm = worked_example()
    n = _by_name(gm)
    try:
        stable_topological_sort(gm.graph, {n["before"]: [n["out"]]})
        said = "the sort raised nothing"
        cycle: tuple[str, ...] = ()
    except FxOracleError as e:
        said = f"the sort says: {e}"
        cycle = tuple(str(e).split("cycle ", 1)[1].split(" -> "))
    order = names_of(list(gm.graph.nodes))
    return Marking(
        (
            same(
                "CYCLE",
                answer.names("CYCLE"),
                cycle,
                "the error follows 'waits on' from the cycle's earliest node (SRT-5)",
                shown=said,
            ),
            same(
                "ORDER_AFTER",
                answer.names("ORDER_AFTER"),
                order,
                "a sort that finds no order leaves the graph untouched (SRT-5)",
            ),
        )
    )


# ---- 05 split ---------------------------------------------------------------------------------
def b6_graph(with_grad_nodes: bool = True) -> GM:
    """Chapter 05's worked example: a = sin(x); with no_grad: e = cos(a); return e + a, a."""
    off = (("no_grad", torch._C._set_grad_enabled, (False,)),) if with_grad_nodes else ()
    on = (("grad", torch._C._set_grad_enabled, (True,)),) if with_grad_nodes else ()
    return _graph(
        ("a", torch.sin, ("x",)),
        *off,
        ("e", torch.cos, ("a",)),
        *on,
        ("total", torch.add, ("e", "a")),
        out=("total", "a"),
    )


def policy(ids: Mapping[str, int]) -> Callable[[Node], int]:
    def callback(node: Node) -> int:
        return ids[node.name]

    return callback


ONE_PER_CALL = {"a": 0, "no_grad": 1, "e": 2, "grad": 3, "total": 4}


def check_05_1(answer: Answer) -> Marking:
    plan = plan_split(b6_graph(), policy(ONE_PER_CALL), keep_original_order=True)
    why = "first appearance, which is topological here, runs every partition in its place"
    return Marking(
        (
            same("REFERENCE_ORDER", answer.numbers("REFERENCE_ORDER"), plan.order, why),
            same("TORCH_ORDER", answer.numbers("TORCH_ORDER"), plan.upstream_order, why),
        )
    )


def check_05_2(answer: Answer) -> Marking:
    gm = b6_graph()
    ids = {"a": 0, "no_grad": 0, "e": 1, "grad": 1, "total": 1}
    plan = plan_split(gm, policy(ids))
    names = [n.name for n in gm.graph.nodes]
    marks = []
    for field, why in (
        ("inputs", "values used here, defined elsewhere (SPL-3)"),
        ("outputs", "values defined here, used elsewhere (SPL-3)"),
        ("preludes", "the no_grad region spans both partitions (SPL-9)"),
    ):
        truth = {p.pid: tuple(names[i] for i in getattr(p, field)) for p in plan.partitions}
        given = answer.raw(field.upper(), dict, "a dict partition id -> list of node names")
        mine = {k: tuple(v) for k, v in given.items()}
        marks.append(same(field.upper(), mine, truth, why))
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    total, _ = split_module(gm, None, policy(ids))(x)
    marks.append(
        same(
            "TOTAL_REQUIRES_GRAD",
            answer.flag("TOTAL_REQUIRES_GRAD"),
            total.requires_grad,
            "the split run on an input that requires grad",
        )
    )
    return Marking(tuple(marks))


def check_05_3(answer: Answer) -> Marking:
    try:
        plan_split(b6_graph(), policy({"a": 1, "no_grad": 0, "e": 2, "grad": 3, "total": 4}))
        refused, said = False, "plan_split accepted the ids"
    except FxOracleError as e:
        refused, said = True, f"plan_split says: {e} (SPL-10)"
    plain = plan_split(b6_graph(with_grad_nodes=False), policy({"a": 1, "e": 0, "total": 0}))
    return Marking(
        (
            same(
                "REFUSED",
                answer.flag("REFUSED"),
                refused,
                "partitions under a global-state switch must not go down in id (SPL-10)",
                shown=said,
            ),
            same(
                "ORDER_WITHOUT_GRAD_NODES",
                answer.numbers("ORDER_WITHOUT_GRAD_NODES"),
                plain.order,
                "without global state ids may go down: partitions run in dependency order",
            ),
        )
    )


EXERCISES = (
    Exercise(
        "04.1",
        ("SRT-6",),
        "EXTRA: dict node name -> list of node names (its extra deps, "
        "in insertion order; [] for none)",
        check_04_1,
    ),
    Exercise(
        "04.2",
        ("SRT-9", "SRT-10"),
        "TORCH_DEPS_OF_INV, INHERITED_DEPS_OF_INV: lists of "
        "node names\nTORCH_ORDER, INHERITED_ORDER: lists of node names, the output included",
        check_04_2,
    ),
    Exercise(
        "04.3",
        ("SRT-5",),
        "CYCLE: list of node names, as the error prints it\n"
        "ORDER_AFTER: list of node names, the output included",
        check_04_3,
    ),
    Exercise(
        "05.1",
        ("SPL-8", "SPL-11"),
        "REFERENCE_ORDER, TORCH_ORDER: lists of partition ids",
        check_05_1,
    ),
    Exercise(
        "05.2",
        ("SPL-3", "SPL-9", "SPL-13"),
        "INPUTS, OUTPUTS, PRELUDES: dicts partition "
        "id -> list of node names\nTOTAL_REQUIRES_GRAD: bool",
        check_05_2,
    ),
    Exercise(
        "05.3",
        ("SPL-10",),
        "REFUSED: bool\nORDER_WITHOUT_GRAD_NODES: list of partition ids",
        check_05_3,
    ),
)
