"""`fxoracle bench --size`: is the reference deliberately simple? (issue 33, "Acceptance").

Part one, reach (`checker.bench.reach`): the functions and files of `reference/` the plain path
of `deduplicate` reaches on the bundled example. Part two, below: code lines per concept
(`checker.bench.lines`: no blanks, comments or docstrings), the reference's files for a concept
against the installed torch's own definitions of it, with the ratio and the issue's limit. What
torch lacks is counted apart, never in a concept; every other file of `reference/` (the
pipeline, the Dynamo adapters, helpers) is listed as shared. A measurement: exit 0 whatever
the verdicts say.

The tables below are the only place concepts are defined. An entry ending in `/` is every `.py`
file directly in that folder, except the files some other row names; a path in a table that no
longer exists (a file moved, a torch definition renamed) is an error, one line naming it, never
a silent 0: update the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from checker.bench import reach
from checker.bench.lines import definitions, file_lines
from checker.io.out_paths import marked
from reference.errors import FxOracleError
from reference.torch_version import TORCH, release

RATIO_MAX = 1.5
TRACKER, DEDUP = "_dynamo/graph_region_tracker.py", "_dynamo/graph_deduplication.py"


@dataclass(frozen=True, slots=True)
class Concept:
    """One algorithm: the reference's files for it, torch's file and definitions of it."""

    name: str
    reference: tuple[str, ...]
    torch_file: str
    torch_names: tuple[str, ...]


CONCEPTS = (
    Concept("key and tracker", ("reference/track/",), TRACKER, (
        "debug_log", "_extract_tensor_metadata_for_node_hash", "NodeHashException",
        "InputPickler", "_extract_args", "_normalize_args", "get_global_state_key",
        "GraphRegionTracker")),
    Concept("expansion", ("reference/expand/",), TRACKER, (
        "GraphRegionTracker.get_identical_regions", "_sort_with_ref_region",
        "BackwardBfsArgIter", "RegionWrapper", "fully_expand_region_group",
        "_populate_recursive_ancestor_map")),
    Concept("outlining", ("reference/replace/",), DEDUP, (
        "apply_graph_deduplication", "_replace_region_with_subgraph", "_get_external_inputs",
        "_get_all_output_indices", "_get_inds_with_external_users", "_create_subgraph",
        "_has_aliasing", "_is_tuple_node", "_get_children_getitems",
        "_get_flattened_node_indices", "_create_getitem_nodes", "_replace_tuple_outputs")),
    Concept("stable sort and deps", ("reference/sort/",), DEDUP, (
        "_stable_topological_sort_impl", "_stable_topological_sort",
        "_stable_topological_sort_region", "_has_cycle", "_populate_additional_deps",
        "_add_global_state_dependencies", "_add_mutation_dependencies")),
    Concept("split_module", ("reference/split/",), "fx/passes/split_module.py", (
        "Partition", "_get_attr_from_qualname", "split_module")),
)  # fmt: skip

# What torch lacks, counted apart.
LACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("alias DB and node effects", ("reference/effects/",)),
    ("cycle refusal", ("reference/replace/cycle.py",)),  # RPL-25
    # RPL-6, RPL-8's result_aliases_operand, RPL-9, RPL-16, RPL-18, RPL-20, RPL-21, RPL-23,
    # RPL-24, RPL-28: the refusals torch's pass lacks
    ("refusals torch lacks", ("reference/replace/stricter.py",)),
    # what they read: pins (RPL-16), take-overs (RPL-17), dead nodes, grad modes (RPL-28)
    ("refusal context, take-over", ("reference/replace/context.py",)),
    # RPL-21, RPL-23, RPL-24, RPL-28: what invoke_subgraph's runtime takes and returns
    ("runtime values", ("reference/replace/runtime.py",)),
    # RPL-22's `val`s and re-run, the call's example value (RPL-4, CHK-1)
    ("metadata torch leaves out", ("reference/replace/values.py",)),
    ("higher-order op bodies", ("reference/replace/bodies.py",)),  # RPL-20
    ("dead code", ("reference/replace/dead.py",)),  # RPL-27
    ("cycle witness", ("reference/sort/cycle.py",)),  # SRT-5 (torch's sort: a boolean), RPL-25
    ("sort trace", ("reference/sort/trace.py",)),  # chapter 04's visit-by-visit picture
    # the policy's switches and the pins torch lacks: SRT-8, SRT-11, and SRT-12/13's selection
    ("ordering corrections", ("reference/sort/rules.py",)),
    ("alias and draw ordering", ("reference/sort/aliases.py",)),  # SRT-12, SRT-13
    # FIL-6's argument checks and the sort's bad-input errors (SRT-2..SRT-6, SRT-9); torch
    # takes its input on trust
    ("bad-input errors", ("reference/arguments.py", "reference/sort/inputs.py")),
    ("split order repair", ("reference/split/repair.py",)),  # SPL-8, SPL-11, SPL-15
    ("fast paths", ("reference/fast/",)),
)


@dataclass(frozen=True, slots=True)
class Counted:
    """Code lines of a set of files or definitions, each by name."""

    parts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.parts)


@dataclass(frozen=True, slots=True)
class Row:
    concept: str
    reference: Counted
    torch_file: str
    torch: Counted

    @property
    def ratio(self) -> float:
        return self.reference.total / self.torch.total

    @property
    def ok(self) -> bool:
        return self.ratio <= RATIO_MAX


@dataclass(frozen=True, slots=True)
class Sizes:
    """Every concept's row, what torch lacks by feature, and the shared rest."""

    rows: tuple[Row, ...]
    lacks: tuple[tuple[str, Counted], ...]  # (feature, its files)
    shared: Counted


def files_of(repo: Path, entries: Sequence[str], named: frozenset[str]) -> list[str]:
    """The files `entries` name, relative to `repo`: a folder's `.py` files but those in `named`
    (claimed by another row), or a file; one that does not exist is an error."""
    found: list[str] = []
    for entry in entries:
        path = repo / entry
        if entry.endswith("/") and path.is_dir():
            found += [p for p in _py_files(repo, path) if p not in named]
        elif not entry.endswith("/") and path.is_file():
            found.append(entry)
        else:
            raise FxOracleError(f"{entry}: no such {'folder' if entry.endswith('/') else 'file'}"
                                " (update the tables of checker/bench/size.py)")  # fmt: skip
    return found


def _py_files(repo: Path, folder: Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in folder.glob("*.py"))


def _counted(repo: Path, files: Sequence[str]) -> Counted:
    return Counted(tuple((f, file_lines(repo / f)) for f in files))


Lacks = Sequence[tuple[str, tuple[str, ...]]]


def measure_lines(
    repo: Path, torch_root: Path, concepts: Sequence[Concept] = CONCEPTS, lacking: Lacks = LACKS
) -> Sizes:
    """Count the reference at `repo` (holding `reference/`) against torch at `torch_root`."""
    entries = [e for c in concepts for e in c.reference] + [e for _, es in lacking for e in es]
    named = frozenset(e for e in entries if not e.endswith("/"))
    rows = tuple(_row(repo, torch_root, c, named) for c in concepts)
    lacks = tuple((name, _counted(repo, files_of(repo, es, named))) for name, es in lacking)
    claimed = {f for r in rows for f, _ in r.reference.parts}
    claimed |= {f for _, c in lacks for f, _ in c.parts}
    rest = sorted(p.relative_to(repo).as_posix() for p in (repo / "reference").rglob("*.py"))
    return Sizes(rows, lacks, _counted(repo, [f for f in rest if f not in claimed]))


# torch's definitions younger than the oldest release fxoracle mirrors, with the release that
# added them: an older torch is counted without them
SINCE = {"_stable_topological_sort_region": (2, 13)}


def _row(repo: Path, torch_root: Path, c: Concept, named: frozenset[str]) -> Row:
    here = release(TORCH.version)[:2]
    names = [n for n in c.torch_names if SINCE.get(n, here) <= here]
    theirs = definitions(torch_root / c.torch_file, names)
    ours = _counted(repo, files_of(repo, c.reference, named))
    return Row(c.name, ours, c.torch_file, Counted(tuple(theirs.items())))


def render_lines(sizes: Sizes) -> list[str]:
    lines = [f"code lines per concept (no blanks, comments, docstrings): reference against "
             f"{TORCH.label}'s own definitions"]  # fmt: skip
    lines.append(f"  {'concept':<22} {'reference':>9} {'torch':>6} {'ratio':>6}")
    for r in sizes.rows:
        lines.append(f"  {r.concept:<22} {r.reference.total:9d} {r.torch.total:6d} "
                     f"{r.ratio:5.2f}x  {_verdict(r.ok)} (<= {RATIO_MAX:g}x)")  # fmt: skip
    lines.append("what torch lacks, not counted above:")
    for name, counted in sizes.lacks:
        lines.append(f"  {name:<26} {counted.total:5d}  {_folded(counted)}")
    lines.append(f"shared, not a concept (pipeline, adapters, helpers): {sizes.shared.total} "
                 f"in {len(sizes.shared.parts)} files")  # fmt: skip
    return lines


def lines_json(sizes: Sizes) -> dict[str, object]:
    return {
        "torch": TORCH.label,
        "ratio_max": RATIO_MAX,
        "concepts": [{"concept": r.concept, "reference": r.reference.total,
                      "reference_files": dict(r.reference.parts), "torch": r.torch.total,
                      "torch_file": r.torch_file, "torch_definitions": dict(r.torch.parts),
                      "ratio": r.ratio, "verdict": _verdict(r.ok)}
                     for r in sizes.rows],
        "lacks": [{"feature": name, "lines": c.total, "files": dict(c.parts)}
                  for name, c in sizes.lacks],
        "shared": {"lines": sizes.shared.total, "files": dict(sizes.shared.parts)},
    }  # fmt: skip


def _folded(counted: Counted) -> str:
    """The files counted, those of one folder written as the folder (`reference/effects/*`)."""
    folders = sorted({f.rsplit("/", 1)[0] for f, _ in counted.parts})
    if len(counted.parts) > 1 and len(folders) == 1:
        return folders[0] + "/*"
    return ", ".join(f for f, _ in counted.parts)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


@dataclass(frozen=True, slots=True)
class SizeReport:
    reach: reach.ReachReport
    sizes: Sizes

    def text(self) -> str:
        (lack_n, lack_f), (rest_n, rest_f) = reach_apart(self.reach.dedup)
        within = "within" if rest_n <= reach.FUNCTIONS_MAX and rest_f <= reach.FILES_MAX else "over"
        apart = (f"  of which only on behalf of what torch lacks (every call with a frame of its "
                 f"modules, below, on the stack): {lack_n} functions in {lack_f} files; the "
                 f"rest: {rest_n} in {rest_f}, {within} the limits (a file may hold both; the "
                 "verdicts above judge the whole)")  # fmt: skip
        lines = [*reach.render(self.reach), apart, "", *render_lines(self.sizes)]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, object]:
        (lack_n, lack_f), (rest_n, rest_f) = reach_apart(self.reach.dedup)
        rest = reach.Reach("rest", self.reach.dedup.rest, self.reach.dedup.rest).by_file()
        apart = {"lacks": {"functions": lack_n, "files": lack_f},
                 "rest": {"functions": rest_n, "files": rest_f, "by_file": rest}}  # fmt: skip
        found = reach.to_json(self.reach) | {"deduplicate_apart": apart}
        return marked("bench", {"reach": found, "lines": lines_json(self.sizes)})


def reach_apart(r: reach.Reach) -> tuple[tuple[int, int], ...]:
    """`r`'s (functions, files) reached only on behalf of what torch lacks, then the rest."""
    lacks = r.functions - r.rest
    return tuple((len(part), len({f for f, _ in part})) for part in (lacks, r.rest))


def lacking_modules(lacking: Lacks = LACKS) -> tuple[str, ...]:
    """The modules of what torch lacks, relative to `reference/`."""
    return tuple(p.removeprefix("reference/") for _, paths in lacking for p in paths)


def run(example: Path, shown: str) -> SizeReport:
    """Both measurements on this checkout and the installed torch."""
    repo = Path(reach.ROOT).parent
    sizes = measure_lines(repo, Path(torch.__file__).parent)
    return SizeReport(reach.measure(example, shown, lacking_modules()), sizes)
