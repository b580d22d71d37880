"""The import graph points one way: cli -> bench | course -> tools/oracle -> proof -> io ->
reference (bench measures the layers below it, the course's exercises use them), and no module
imports, even inside a function, a module that imports it back (overview, "Layout"). Inside the
oracle too: diff -> campaign -> pool -> repro -> compare -> sides (and plugins) -> protocol, the
order `fxoracle diff` runs them in reverse (spec chapter 08).

Every `import` statement of every module is read with `ast` (function-level ones included), so a
lazy import that would hide a circle or an upward edge is seen too.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import networkx as nx

from tests.support.paths import ROOT

# a module's layer is the longest prefix listed; a layer may import its own and lower ranks
RANK = {
    "reference": 0,
    "checker.io": 1,
    "checker.proof": 2,
    "checker.oracle": 3,
    "checker.tools": 3,
    "checker.bench": 4,  # measures every layer below it
    "checker.course": 4,  # the course's exercises use every layer below it
    "checker": 5,  # the package's public facade and cli.py
}
PEERS_APART = {("checker.oracle", "checker.tools"), ("checker.tools", "checker.oracle")}
# the oracle's sub-packages, by the same rule; its top level is the plug-in contract alone
ORACLE_RANK = {
    "checker.oracle": 0,  # the package and `protocol`
    "checker.oracle.sides": 1,
    "checker.oracle.plugins": 1,  # implementations under test: they read the contract only
    "checker.oracle.compare": 2,
    "checker.oracle.repro": 3,
    "checker.oracle.pool": 4,
    "checker.oracle.campaign": 5,
    "checker.oracle.diff": 6,
}
ORACLE_APART = {
    ("checker.oracle.sides", "checker.oracle.plugins"),
    ("checker.oracle.plugins", "checker.oracle.sides"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str, ranks: Mapping[str, int] = RANK) -> str:
    return max((p for p in ranks if module == p or module.startswith(p + ".")), key=len)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules `path` imports (`from a.b import c` counts `a.b.c` when it is a
    module, else `a.b`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                child = f"{node.module}.{a.name}"
                found.add(child if child in modules else node.module)
    return {m for m in found if m in modules}


def import_graph() -> nx.DiGraph[str]:
    files = sorted(p for pkg in ("reference", "checker") for p in (ROOT / pkg).rglob("*.py"))
    files = [p for p in files if "examples" not in p.parts]
    modules = {module_name(p): p for p in files}
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imports_of(path, set(modules)))
    return graph


def test_no_import_circle() -> None:
    graph = import_graph()
    # a package's __init__ re-exporting its own modules is not a circle of meaning
    graph.remove_edges_from([(a, b) for a, b in graph.edges if b.startswith(a + ".")])
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert not cycles, f"import circles: {cycles[:5]}"


def test_imports_point_down() -> None:
    graph = import_graph()
    upward = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if RANK[layer(b)] > RANK[layer(a)] or (layer(a), layer(b)) in PEERS_APART
    )
    assert not upward, "imports that point upward or across peers:\n" + "\n".join(upward)


def test_oracle_sub_packages_point_down() -> None:
    """sides -> compare -> repro is the direction of `fxoracle diff`'s data; an import the
    other way (a comparison reaching into the diff's driver, say) fails here."""
    graph = import_graph()
    inside = [(a, b) for a, b in graph.edges if layer(a) == layer(b) == "checker.oracle"]
    upward = sorted(
        f"{a} -> {b}"
        for a, b in inside
        if ORACLE_RANK[layer(b, ORACLE_RANK)] > ORACLE_RANK[layer(a, ORACLE_RANK)]
        or (layer(a, ORACLE_RANK), layer(b, ORACLE_RANK)) in ORACLE_APART
    )
    assert not upward, "oracle imports that point upward or across peers:\n" + "\n".join(upward)


def test_the_oracle_s_top_level_is_the_contract() -> None:
    """Every other oracle module sits in the sub-package of its concern."""
    oracle = [m for m in import_graph() if layer(m) == "checker.oracle"]
    top = {m for m in oracle if layer(m, ORACLE_RANK) == "checker.oracle"}
    assert top == {"checker.oracle", "checker.oracle.protocol"}, sorted(top)


def test_reference_never_imports_checker() -> None:
    graph = import_graph()
    found = [f"{a} -> {b}" for a, b in graph.edges if a.startswith("reference") and
             b.startswith("checker")]  # fmt: skip
    assert not found, found


def test_every_layer_is_a_package() -> None:
    for name in [*RANK, *ORACLE_RANK]:
        if name != "checker":
            assert (ROOT.joinpath(*name.split(".")) / "__init__.py").is_file(), name


# The reference's folders, one per spec chapter, and its driver: a folder imports only its own
# modules and lower ranks. The shared helpers (errors, arguments, names, fx_helpers, policy,
# torch_version, graph_copy) sit at the bottom.
REFERENCE_RANK = {
    "reference": 0,
    # the expansion's and the sort's speed-ups import nothing of the reference: the plain
    # modules take them on `fast=True`
    "reference.fast.expand": 0,
    "reference.fast.sort": 0,
    "reference.effects": 1,
    "reference.expand": 1,
    "reference.track": 2,
    "reference.sort": 2,
    "reference.replace": 3,
    "reference.split": 3,
    "reference.fast": 4,  # speed-ups of the plain definitions below, chosen by the pipeline
    "reference.pipeline": 5,
    "reference.dynamo": 6,
}


def reference_folder(module: str) -> str:
    return max((p for p in REFERENCE_RANK if module == p or module.startswith(p + ".")), key=len)


def test_reference_folders_import_down() -> None:
    graph = import_graph()
    edges = [(a, b) for a, b in graph.edges if a.startswith("reference.") and b != "reference"]
    upward = sorted(
        f"{a} -> {b}"
        for a, b in edges
        if reference_folder(a) != reference_folder(b)
        and REFERENCE_RANK[reference_folder(b)] >= REFERENCE_RANK[reference_folder(a)]
    )
    assert not upward, "reference imports that point up or across:\n" + "\n".join(upward)
    assert len(edges) > 50, "the graph reads the reference's imports"
