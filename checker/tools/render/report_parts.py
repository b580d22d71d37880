"""The pieces of the verify report page that are not drawings: values as lists and tables,
verdict badges, one row per obligation, what became of each group, and the timings (spec
chapter 06, reports, CHK-10).

Nothing here prints a Python or JSON repr: a mapping is a table, a sequence a list, a verdict a
coloured badge with its word. Every timing sits in a cell of class `time`, the one thing that
differs between two runs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

from checker.io.reports import plural
from checker.proof.report import Obligation, Report
from checker.proof.verdict import Holds, Unknown, Violated, verdict_name
from checker.tools.explain import GroupLesson, step_verdict
from checker.tools.outcomes import Fate, RegionOutcome
from checker.tools.render.drawing import group_colour

SPEC = "specs/06-checker.md"  # relative to the page: it resolves on a page at the repo's root
# each obligation's section of SPEC, as GitHub anchors its heading (a test reads the spec)
SECTIONS = {
    "CHK-1": "chk-1-the-transformed-module-is-well-formed",
    "CHK-2": "chk-2-the-transformed-graph-is-acyclic-extra-dependencies-included",
    "CHK-3": "chk-3-the-flat-graph-computes-what-the-original-computes-node-for-node",
    "CHK-4": "chk-4-the-originals-mutation-order-and-global-state-hold-in-the-flat-order",
    "CHK-5": "chk-5-every-calls-operands-have-the-shapes-its-callee-was-traced-with",
    "CHK-6": "chk-6-the-two-modules-agree-on-the-same-inputs",
    "CHK-17": "chk-17-torchs-runtime-runs-the-transformed-module",
}
FOLD = 8  # a group's outcomes are folded above this many, unless one is a refusal
_RANK = {"violated": 0, "unknown": 1, "holds": 2}  # violated rows first, then unknown


def esc(value: object) -> str:
    return html.escape(str(value))


def value_html(value: object) -> str:
    """A scalar as text, a mapping as a two-column table, any other sequence as a list (of
    scalars: on one line, comma-separated)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return esc(value)
    if isinstance(value, Mapping):
        rows = "".join(f"<tr><th>{esc(k)}</th><td>{value_html(v)}</td></tr>"
                       for k, v in value.items())  # fmt: skip
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, Sequence):
        flat = all(isinstance(v, str | int | float | bool) for v in value)
        items = "".join(f"<li>{value_html(v)}</li>" for v in value)
        return f'<ul class="flat">{items}</ul>' if flat else f"<ul>{items}</ul>"
    return esc(type(value).__name__)


def badge(word: str) -> str:
    """`holds`, `violated`, `unknown`, `replaced`, `refused`, `not replaced`, `ok`, `not ok`:
    the word on its colour (the word is there for a reader who does not see the colour)."""
    return f'<span class="badge {word.replace(" ", "-")}">{esc(word.upper())}</span>'


def ok_line(ok: bool, reports: Sequence[Report]) -> str:
    """The verdict of the whole run, first on the page: a badge and what it rests on."""
    obligations = [o for r in reports for o in r.obligations]
    counts = {name: sum(verdict_name(o.verdict) == name for o in obligations) for name in _RANK}
    said = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    text = "every obligation holds" if ok else f"not every obligation holds ({said})"
    return f'<p class="verdict">{badge("ok" if ok else "not ok")} {esc(text)}</p>'


def obligations_table(report: Report) -> str:
    """One row per obligation, violated then unknown then holding, each in id order; the
    witness or reason in full, open."""
    rows = sorted(report.obligations, key=lambda o: _RANK[verdict_name(o.verdict)])
    head = "<tr><th>id</th><th>obligation</th><th>verdict</th><th>witness or reason</th></tr>"
    body = "\n".join(_obligation_row(o) for o in rows)
    return f'<table class="obligations">\n{head}\n{body}\n</table>'


def _obligation_row(o: Obligation) -> str:
    name = verdict_name(o.verdict)
    section = SECTIONS.get(o.id)
    where = f"{SPEC}#{section}" if section else SPEC
    link = f'<a href="{esc(where)}" title="{esc(SPEC)}, {esc(o.id)}">{esc(o.id)}</a>'
    cells = f"<td>{link}</td><td>{esc(o.name)}</td><td>{badge(name)}</td><td>{_evidence(o)}</td>"
    return f'<tr class="{name}" data-obligation="{esc(o.id)}">{cells}</tr>'


def _evidence(o: Obligation) -> str:
    match o.verdict:
        case Violated(witness, model):
            values = value_html(dict(model)) if model else ""
            return _open("witness", f"<pre>{esc(witness)}</pre>{values}")
        case Unknown(reason):
            return _open("reason", f"<pre>{esc(reason)}</pre>")
        case Holds(note):
            return esc(note) if note else '<span class="note">-</span>'


def _open(title: str, inner: str) -> str:
    return f"<details open><summary>{title}</summary>{inner}</details>"


def swatch(group: int) -> str:
    return f'<span class="swatch" style="background: {group_colour(group)}"></span>'


_ID = re.compile(r"\b([A-Z]{3}-\d+)\b")


def group_section(
    index: int,
    regions: Sequence[Sequence[str]],
    outcomes: Sequence[RegionOutcome],
    lesson: GroupLesson,
) -> str:
    """A group: its shape and representative nodes, each region's fate (the records `explain`
    prints, `region_fates`), and the lock-steps that were refused, with what differed."""
    shape = f"{plural(len(regions), 'region')} x {plural(len(regions[0]), 'node')}"
    return "\n".join([f'<section class="group" data-group="{index}">',
                      f"<h3>{swatch(index)}group {index} (tag g{index}): {esc(shape)}</h3>",
                      f'<p><b>representative</b> (region 0): <span class="names">'
                      f"{esc(', '.join(regions[0]))}</span></p>",
                      _fates(outcomes), _growth(lesson), "</section>"])  # fmt: skip


def _fates(outcomes: Sequence[RegionOutcome]) -> str:
    """A row per outcome under their counts; folded when all are replacements, and more than
    `FOLD`."""
    rows = [_outcome_row(o) for o in outcomes]
    refused = sum(o.fate is not Fate.REPLACED for o in outcomes)
    counts = f"{len(rows) - refused} replaced, {refused} refused"
    table = '<table class="regions"><tr><th>region</th><th>fate</th><th>how</th></tr>'
    opened = " open" if refused or len(rows) <= FOLD else ""
    return (f'<details class="fates"{opened}><summary>regions: {counts}</summary>{table}'
            f"{''.join(rows)}</table></details>")  # fmt: skip


def _growth(lesson: GroupLesson) -> str:
    """The refused lock-steps: the candidates, the id that refused them, what differed."""
    refused = [(k, s) for k, s in enumerate(lesson.steps, start=1) if not s.joined]
    joined = len(lesson.steps) - len(refused)
    growth = f"{plural(joined, 'step')} joined every region; {plural(len(refused), 'step')}"
    items = [f"<li>step {k}: {esc(', '.join(s.candidates))} &rarr; {_ids(step_verdict(s))}</li>"
             for k, s in refused]  # fmt: skip
    return (f'<details class="steps"><summary>growth: {esc(growth)} refused (the candidates, '
            f"the id that refused them, what differed)</summary><ul>{''.join(items)}</ul>"
            "</details>")  # fmt: skip


def _outcome_row(o: RegionOutcome) -> str:
    """A region, its fate's badge (replaced, refused, or not replaced with its group), and
    the rest of its line with its ids in bold."""
    how = o.how().removeprefix(", ").removeprefix(" ")
    return f"<tr><td>region {o.region}</td><td>{badge(str(o.fate))}</td><td>{_ids(how)}</td></tr>"


def _ids(text: str) -> str:
    """`text` escaped, its invariant ids (`RPL-7`, `EXP-6`) in bold."""
    return _ID.sub(r"<b>\1</b>", esc(text))


def timings_table(timings: Mapping[str, float]) -> str:
    """Seconds per phase and their sum; each number in a `time` cell (masked when comparing
    two runs)."""
    rows = [f'<tr><th>{esc(k.removesuffix("_s"))}</th><td class="time">{v:.2f} s</td></tr>'
            for k, v in timings.items()]  # fmt: skip
    total = sum(timings.values())
    rows.append(f'<tr><th>total</th><td class="time">{total:.2f} s</td></tr>')
    return '<table class="timings">\n' + "\n".join(rows) + "\n</table>"
