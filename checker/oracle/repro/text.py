"""The text of the oracle's repro scripts (spec chapter 08, DIF-8).

A repro is a standalone file that fails with an `AssertionError` on the wrong side.
`model_repro` appends a `__main__` block to a (shrunk) model file's source, `graph_repro` to
statements that rebuild a (shrunk) graph (`checker.oracle.repro.graph_source`). Against torch the
block needs only torch: it runs torch's pass, tracker, sort or splitter and asserts the
property torch breaks; against the reference or a user's implementation it runs the oracle on
itself and asserts that it no longer blames the same side. A plug-in is loaded as the run loaded
it, from any directory (DIF-19): a file by its absolute path, a module found in the working
directory with that directory put on `sys.path`; one header line says how.
"""

from __future__ import annotations

import re
import sys
from typing import Any, assert_never

import torch
import torch.fx

from checker.io.device import moving_lines
from checker.io.out_paths import REPRO_HEAD
from checker.oracle.compare.divergence import Blame, Divergence
from checker.oracle.repro.graph_source import graph_source
from checker.oracle.sides.cases import parse_split_case, partition_ids, sort_input
from checker.oracle.sides.impls import TorchImpl, TorchSimpleImpl
from checker.oracle.sides.loading import Against, Origin
from checker.oracle.sides.sides import Component, Sides
from reference.torch_version import TORCH, mirrored_series, unmirrored


def _is_torch(sides: Sides, d: Divergence) -> bool:
    """torch alone is wrong: the repro needs only torch."""
    return d.blame is Blame.OTHER and isinstance(sides.other, TorchImpl | TorchSimpleImpl)


def header(d: Divergence) -> str:
    """The repro's first lines (DIF-28): what diverged, the interpreter that runs it (the one
    fxoracle ran with: a system `python3` may lack torch), and the whole detail, one comment
    line per line of it (never cut mid-value)."""
    case = f" [{d.case}]" if d.case else ""
    head = f"{REPRO_HEAD}{TORCH.label}): {d.component} {d.kind}{case}, wrong: {d.wrong}\n"
    head += f"# run it with: {sys.executable} <this file>\n"
    return head + "".join(f"# {line}".rstrip() + "\n" for line in d.detail.splitlines())


def model_repro(
    source: str, d: Divergence, sides: Sides, device: torch.device | None = None
) -> str:
    """The model's source, moved to the run's `--device` as the run moved it (FIL-16), then a
    `__main__` block that fails on the wrong side."""
    head = header(d) + _loaded(sides, d)
    futures = "".join(_FUTURE.findall(source))  # must stay the first statements
    head, source = head + futures + version_guard(), _FUTURE.sub("", source)
    if device is not None:
        source += moving_lines(device)
    if not _is_torch(sides, d):
        return head + source + _ORACLE_MAIN.format(**_oracle_fields(sides.against, d))
    main = _TORCH_DEDUP_MAIN if d.component is Component.DEDUP else _TORCH_TRACKER_MAIN
    return head + source + _HELPERS + main


def _loaded(sides: Sides, d: Divergence) -> str:
    """The header line that says how the plug-in is loaded (DIF-19): none against torch."""
    return "" if _is_torch(sides, d) else _loaded_line(sides.against)


_FUTURE = re.compile(r"^from __future__ import [^\n]*\n", re.MULTILINE)


def version_guard() -> str:
    """The repro's first statements (FIL-14): on a torch fxoracle does not mirror, the one line
    fxoracle itself would print, and exit 2, before the model or torch's internals are read."""
    message = unmirrored("{_torch.__version__}")
    return (
        "import sys as _sys  # the torch releases fxoracle mirrors; any other: exit 2 (FIL-14)\n"
        "import torch as _torch\n"
        "if tuple(int(n) for n in _torch.__version__.split('.')[:2]) not in "
        f"{mirrored_series()!r}:\n"
        f"    print(f{('fxoracle repro: ' + message)!r}, file=_sys.stderr)\n"
        "    _sys.exit(2)\n\n"
    )


_HELPERS = """

def _fresh(values):
    return tuple(v.detach().clone().requires_grad_(v.requires_grad)
                 if isinstance(v, torch.Tensor) else v for v in values)


def _run(fn):
    torch.manual_seed(0)  # every generator, before each run: the draws come out the same
    args = _fresh(example_inputs)
    out = [t for t in torch.utils._pytree.tree_leaves(fn(*args)) if isinstance(t, torch.Tensor)]
    return out, list(args), [t.requires_grad for t in out]
"""

_TORCH_DEDUP_MAIN = """

if __name__ == "__main__":  # torch's deduplication changes what the model computes
    expected = _run(model)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(use_graph_deduplication=True):
        dyn = globals().get("dynamic", False)
        try:
            got = _run(torch.compile(model, backend="eager", fullgraph=True, dynamic=dyn))
        except Exception as e:  # the model compiles without deduplication
            raise AssertionError(f"torch.compile with deduplication raised {e!r}") from e
    torch.testing.assert_close(got[:2], expected[:2], equal_nan=True)
    assert got[2] == expected[2], f"requires_grad {got[2]} instead of {expected[2]}"
"""

_TORCH_TRACKER_MAIN = """

if __name__ == "__main__":  # torch's region groups overlap or pair different nodes
    from torch._dynamo.symbolic_convert import InstructionTranslator

    groups = []

    def backend(gm, inputs):
        tracker = InstructionTranslator.current_tx().output.region_tracker
        groups.extend(tracker.get_identical_regions(gm.graph))
        return gm.forward

    torch._dynamo.reset()
    with torch._dynamo.config.patch(track_nodes_for_deduplication=True):
        dyn = globals().get("dynamic", False)
        torch.compile(model, backend=backend, fullgraph=True, dynamic=dyn)(*_fresh(example_inputs))
    seen = set()
    for group in groups:
        for node in (n for region in group for n in region):
            assert node not in seen, f"{node.name} is in two regions"
            seen.add(node)
        for nodes in zip(*group):
            what = {(n.op, n.target, repr(torch.fx.map_arg((n.args, n.kwargs), lambda _: None)))
                    for n in nodes}
            assert len(what) == 1, f"one region position holds different nodes: {nodes}"
"""

_ORACLE_MAIN = """

if __name__ == "__main__":  # needs fxoracle: the oracle still blames the same side
{setup}    torch.manual_seed(0)  # every generator: the model's inputs are the run's
    from checker.io.model_file import load_model_file
    from checker.oracle.diff.driver import diff_model
    from checker.oracle.sides.sides import make_sides

    found = diff_model(load_model_file(__file__), make_sides({against!r}, {component!r}))
    blamed = [d for d in found.divergences if d.blame == {blame!r}]
    assert not blamed, blamed[0].detail
"""


def _oracle_fields(against: Against, d: Divergence) -> dict[str, str]:
    """What the oracle's main blocks are formatted with: the side as the repro loads it from any
    directory (DIF-19), the component, the case and the blame (not the side's label, which
    names the plug-in as the run was given it)."""
    setup = ""
    if against.origin is Origin.WORKING_DIR:
        setup = (f"    import sys\n\n    sys.path.insert(0, {against.where!r})"
                 "  # the plug-in's module is in this folder\n")  # fmt: skip
    return {"setup": setup, "against": against.portable, "component": str(d.component),
            "case": d.case, "blame": str(d.blame)}  # fmt: skip


def _loaded_line(against: Against) -> str:
    """One header line: how the repro loads the plug-in (DIF-19); none for a built-in side."""
    match against.origin:
        case Origin.BUILT_IN:
            return ""
        case Origin.FILE:
            how = f"loaded from the file {against.where!r} (importlib.util.spec_from_file_location)"
        case Origin.WORKING_DIR:
            how = f"its module is in {against.where!r}, which the main block puts on sys.path"
        case Origin.SYS_PATH:
            how = f"imported by name (found in {against.where!r}): installed, or on PYTHONPATH"
        case _:
            assert_never(against.origin)
    return f"# plug-in {against.given!r}: {how}\n"


def graph_repro(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], d: Divergence, sides: Sides
) -> str | None:
    """A script that rebuilds `gm` with torch.fx and fails on the wrong side; None when the
    graph cannot be written as source (a target or constant with no importable name)."""
    built = graph_source(gm, inputs)
    if built is None:
        return None
    head = header(d) + _loaded(sides, d) + version_guard()
    imports = "import builtins\nimport operator\n\nimport torch\n\n"
    if not _is_torch(sides, d):
        template = _ORACLE_SORT_MAIN if d.component is Component.SORT else _ORACLE_SPLIT_MAIN
        main = template.format(**_oracle_fields(sides.against, d))
        return head + imports + built + main
    head += imports
    main = _sort_main(gm, d) if d.component is Component.SORT else _split_main(gm, d, sides)
    return head + built + main


_ORACLE_SORT_MAIN = """

if __name__ == "__main__":  # needs fxoracle: the oracle still blames the same side
{setup}    from checker.oracle.compare.graph_level import sort_case
    from checker.oracle.sides.sides import make_sides

    found = sort_case(gm, make_sides({against!r}, {component!r}), {case!r})
    blamed = [d for d in found if d.blame == {blame!r}]
    assert not blamed, blamed[0].detail
"""

_ORACLE_SPLIT_MAIN = """

if __name__ == "__main__":  # needs fxoracle: the oracle still blames the same side
{setup}    from checker.oracle.compare.graph_level import split_case
    from checker.oracle.sides.cases import parse_split_case
    from checker.oracle.sides.sides import make_sides

    sides = make_sides({against!r}, {component!r}, hostile=True)
    found = split_case(gm, inputs, sides, parse_split_case({case!r}))
    blamed = [d for d in found if d.blame == {blame!r}]
    assert not blamed, blamed[0].detail
"""


def _split_main(gm: torch.fx.GraphModule, d: Divergence, sides: Sides) -> str:
    case = parse_split_case(d.case)
    ids = partition_ids(case.policy, gm)
    parts = [ids[n] for n in gm.graph.nodes if n.op.startswith("call")]
    simple = type(sides.other).__name__ == "TorchSimpleImpl"
    call = (
        "split_module_simple(gm, dict(zip(calls, parts)), partition_affix=AFFIX)"
        if simple
        else "split_module(gm, None, dict(zip(calls, parts)).__getitem__, "
        "keep_original_order=KEEP, partition_affix=AFFIX)"
    )
    splitter = call.split("(", 1)[0]  # torch 2.11 and 2.12 have no split_module_simple
    return _SPLIT_MAIN.format(case.keep_original_order, case.affix, parts, call, splitter)


_SPLIT_MAIN = """
KEEP, AFFIX = {0!r}, {1!r}
calls = [n for n in gm.graph.nodes if n.op.startswith("call")]
parts = {2!r}


def _run(module, grad_inputs, caller_grad):
    torch.manual_seed(0)  # every generator, before each run: the draws come out the same
    args = [t.detach().clone().requires_grad_(grad_inputs or t.requires_grad)
            if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    mode = torch.is_grad_enabled()
    torch.set_grad_enabled(caller_grad)
    try:
        out = [t for t in torch.utils._pytree.tree_leaves(module(*args))]
        return out, args, [t.requires_grad for t in out], torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(mode)


if __name__ == "__main__":  # torch's split_module crashes or changes the result
    from torch.fx.passes.split_module import {4}

    try:
        split = {3}
    except Exception as e:
        raise AssertionError(f"torch's split failed on a valid graph: {{e!r}}") from e
    probes = [(False, True)]
    if any(n.target is torch._C._set_grad_enabled for n in gm.graph.nodes):
        probes += [(True, True), (True, False)]  # inputs requiring grad; caller under no_grad
    for probe in probes:
        try:
            expected = _run(gm, *probe)
        except Exception:
            continue  # the original does not run this way
        try:
            got = _run(split, *probe)
        except Exception as e:
            raise AssertionError(f"torch's split module raised {{e!r}}") from e
        torch.testing.assert_close(got[:2], expected[:2], equal_nan=True)
        assert got[2:] == expected[2:], f"requires_grad/grad mode {{got[2:]}} != {{expected[2:]}}"
"""


def _sort_main(gm: torch.fx.GraphModule, d: Divergence) -> str:
    scrambled, deps = sort_input(gm, d.case)
    index = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    order = [index[n.name] for n in scrambled.graph.nodes]
    extra = {index[n.name]: [index[x.name] for x in xs] for n, xs in deps.items()}
    return _SORT_MAIN.format(order, extra)


_SORT_MAIN = """
order, extra = {0!r}, {1!r}

if __name__ == "__main__":  # torch's stable sort leaves a node before a dependency
    from torch._dynamo.graph_deduplication import _stable_topological_sort
    from torch.utils._ordered_set import OrderedSet

    nodes = list(gm.graph.nodes)
    for i in order[:-1]:
        nodes[order[-1]].prepend(nodes[i])
    deps = {{nodes[i]: OrderedSet(nodes[j] for j in js) for i, js in extra.items()}}
    _stable_topological_sort(gm.graph, deps)
    position = {{n: k for k, n in enumerate(gm.graph.nodes)}}
    assert list(gm.graph.nodes)[-1].op == "output", "the output is not last"
    for n in gm.graph.nodes:
        for dep in (*n.all_input_nodes, *deps.get(n, ())):
            assert position[dep] < position[n], f"{{n.name}} comes before {{dep.name}}"
"""
