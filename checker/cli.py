"""The `fxoracle` command line: verify, explain, diff, fuzz, bench, course (README "Usage"; the
arguments: `checker.cli_args`).

Bad input prints one line on stderr and exits 2 (a traceback only with `--debug`): a bad
argument, an output that cannot be written (checked before any work, FIL-2), a data file that
would run code (FIL-1), anything a user's code raises, `SystemExit` included (FIL-4). A failed
check exits 1; success exits 0. Reports are written atomically: a temporary file renamed into
place, a stream written straight (FIL-3).
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from checker.cli_args import build_parser
from checker.io.model_file import load_model_file, model_names
from checker.io.out_paths import check_outputs
from checker.io.reports import plural, to_json, write_atomically
from checker.io.user_code import what_raised
from checker.tools.checked_pipeline import Split
from reference.errors import FxOracleError

if TYPE_CHECKING:
    from checker.oracle.diff.driver import DiffBar
    from checker.oracle.diff.report import DiffReport

BUNDLED_EXAMPLE = Path(__file__).parent / "examples" / "transformer.py"


def _run(args: argparse.Namespace) -> int:
    match args.command:
        case "verify":
            return _run_verify(args)
        case "explain":
            return _run_explain(args)
        case "diff":
            return _run_diff(args)
        case "fuzz":
            return _run_fuzz(args)
        case "course":
            return _run_course(args)
        case _:
            return _run_bench(args)


def _run_verify(args: argparse.Namespace) -> int:
    from checker.tools import verify
    from checker.tools.render.html_report import verify_page

    path = Path(args.path) if args.path else BUNDLED_EXAMPLE
    split = Split.parse(args.split) if args.split else None
    check_outputs([args.json, args.html], inputs=[path])
    report = verify.run_verify(path, dynamic=args.dynamic, split=split,
                               trust_pickles=args.trust_pickles, note=_note,
                               device=args.device)  # fmt: skip
    if args.json != "-":  # with `--json -` stdout carries the JSON alone
        print(verify.render_text(report), end="")
    if args.json:
        write_atomically(args.json, to_json(report.to_json()))
    if args.html:
        write_atomically(args.html, verify_page(report))
    return 0 if report.ok else 1


def _run_explain(args: argparse.Namespace) -> int:
    from checker.tools import explain
    from checker.tools.render.explain_html import render_explain_html

    path = Path(args.path) if args.path else BUNDLED_EXAMPLE
    check_outputs([args.json, args.html], inputs=[path])
    lesson, original = explain.run_explain(path, group=args.group, device=args.device)
    if args.json != "-":
        print(explain.render_text(lesson), end="")
    if args.json:
        write_atomically(args.json, to_json(lesson.to_json()))
    if args.html:
        write_atomically(args.html, render_explain_html(lesson, original.graph))
    return 0


def _run_diff(args: argparse.Namespace) -> int:
    """0: no side blamed; 1: a side is wrong (or fxoracle failed); the report says which."""
    from checker.oracle.diff.driver import DiffBar
    from checker.oracle.diff.report import render_text

    if not args.paths and args.random <= 0:
        raise FxOracleError("diff: give model files and/or --random N")
    check_outputs([args.json], folders=[args.repro_dir], inputs=args.paths)
    with DiffBar() as bar:
        report = _diffed(args, bar)
    if args.json != "-":
        print(render_text(report, debug=args.debug), end="")
    if args.json:
        write_atomically(args.json, to_json(report.to_json()))
    return 1 if report.fails_on(args.fail_on) else 0


def _diffed(args: argparse.Namespace, bar: DiffBar) -> DiffReport:
    """The diff of every model asked for, in this process or on `--workers` processes."""
    from checker.oracle.diff.driver import run_diff
    from checker.oracle.diff.workers import DiffArgs, model_refs, run_diff_pool

    if args.workers > 1:
        refs = model_refs(args.paths, args.random, args.seed)
        task = DiffArgs(args.against, args.component, args.strict_order, args.repro_dir,
                        device=args.device)  # fmt: skip
        return run_diff_pool(refs, task, args.workers, progress=bar)
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    names = model_names(args.paths)  # unique in the report and as repro names (DIF-15)
    models = [load_model_file(p, n) for p, n in zip(args.paths, names, strict=True)]
    return run_diff(models, args.against, args.component, args.random, args.seed,
                    repro_dir, progress=bar, strict_order=args.strict_order,
                    device=args.device)  # fmt: skip


def _run_fuzz(args: argparse.Namespace) -> int:
    """0: no bug of fxoracle found; 1: an oracle error or a divergence blamed on it (DIF-9), or
    with `--fail-on plugin` one blamed on the side under test (DIF-32)."""
    from checker.oracle.campaign.fuzz import CampaignBar, run_campaign

    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    check_outputs([args.out], folders=[args.repro_dir])
    with CampaignBar(args.max_models) as bar:
        campaign = run_campaign(args.minutes, args.seed, Path(args.out), against=args.against,
                                repro_dir=repro_dir, max_models=args.max_models, progress=bar,
                                workers=args.workers, ray=args.ray,
                                device=args.device)  # fmt: skip
    ours, theirs = campaign.fxoracle_bugs, campaign.other_blamed
    found = plural(len(campaign.findings), "signature")
    print(f"{plural(campaign.models, 'model')}, {found} -> {args.out}")
    if ours:
        print(f"fxoracle's own bugs (DIF-9): {', '.join(ours)}")
    if theirs:
        print(f"blamed on {campaign.against}: {', '.join(theirs)}")
    return 1 if ours or (theirs and args.fail_on == "plugin") else 0


def _run_bench(args: argparse.Namespace) -> int:
    """A measurement: 0 whatever the targets say."""
    from checker.bench import campaign, dedup, detect, regions

    check_outputs([args.json])
    json_path = Path(args.json) if args.json else None
    print(regions.run(args.sizes, args.repeat, args.kind, args.torch_max, json_path), end="")
    print(dedup.run(args.sizes), end="")
    if args.campaign_models > 0:
        print(campaign.run(args.campaign_models, 0), end="")
    if args.detect_models > 0:
        print(detect.run(0, models=args.detect_models), end="")
    return 0


def _run_course(args: argparse.Namespace) -> int:
    """`course list`; `course check ID FILE`: 0 right, 1 wrong; `--solution` prints the
    shipped answer (exit 0 when no FILE was given)."""
    from checker.course import catalogue

    if args.course_command == "list":
        print(catalogue.listing(), end="")
        return 0
    catalogue.exercise(args.exercise)  # an unknown id is bad input before any work
    if args.file is None and not args.solution:
        raise FxOracleError(f"course check {args.exercise}: give your answer file (or --solution)")
    code = 0
    if args.file is not None:
        check_outputs([args.json], inputs=[args.file])
        path = Path(args.file)
        verdict = catalogue.check_file(args.exercise, path)
        if args.json != "-":
            print(catalogue.render_text(args.exercise, path, verdict), end="")
        if args.json:
            write_atomically(args.json, to_json(catalogue.to_json(args.exercise, path, verdict)))
        code = 0 if verdict.right else 1
    if args.solution:
        print(catalogue.solution(args.exercise), end="")
    return code


def _note(text: str) -> None:
    """What was done other than the user may expect, one line on stderr (`.pt2` inputs)."""
    print(f"fxoracle: note: {text}", file=sys.stderr)


def _exit_is_an_error(args: argparse.Namespace) -> int:
    """`_run`, where a `SystemExit` can only come from a user's code that escaped every guard
    (a model's forward, a plug-in's method): bad input, one line (FIL-4)."""
    try:
        return _run(args)
    except SystemExit as e:
        raise FxOracleError(f"{args.command}: user code raised {what_raised(e)}") from e


@contextmanager
def _quiet(enabled: bool) -> Iterator[None]:
    """Without --debug, torch's own log records and warnings do not reach the terminal."""
    if not enabled:
        yield
        return
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(logging.NOTSET)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fxoracle` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        with _quiet(not debug):
            return _exit_is_an_error(args)
    except FxOracleError as e:
        if debug:
            raise
        print(f"fxoracle: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fxoracle: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
