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
from checker.io.out_paths import Output, check_outputs
from checker.io.reports import plural, to_json, write_atomically
from checker.io.shown import one_line, shown_lines
from checker.io.supervise import supervised
from checker.io.user_code import stdout_to_stderr, time_limit_set, what_raised
from checker.oracle.sides.loading import plugin_sources
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
    json_out, html_out = check_outputs(
        [(args.json, "verify"), (args.html, "html")], inputs=[path]
    ).files
    with stdout_to_stderr():
        report = verify.run_verify(path, dynamic=args.dynamic, split=split,
                                   trust_pickles=args.trust_pickles, note=_note,
                                   device=args.device)  # fmt: skip
    if args.json != "-":  # with `--json -` stdout carries the JSON alone
        _print(verify.render_text(report))
    if json_out:
        write_atomically(json_out, to_json(report.to_json()))
    if html_out:
        write_atomically(html_out, shown_lines(verify_page(report)))
    return 0 if report.ok else 1


def _run_explain(args: argparse.Namespace) -> int:
    from checker.tools import explain
    from checker.tools.render.explain_html import render_explain_html

    path = Path(args.path) if args.path else BUNDLED_EXAMPLE
    json_out, html_out = check_outputs(
        [(args.json, "explain"), (args.html, "html")], inputs=[path]
    ).files
    with stdout_to_stderr():
        lesson, original = explain.run_explain(path, group=args.group, device=args.device)
    if args.json != "-":
        _print(explain.render_text(lesson))
    if json_out:
        write_atomically(json_out, to_json(lesson.to_json()))
    if html_out:
        write_atomically(html_out, shown_lines(render_explain_html(lesson, original.graph)))
    return 0


def _run_diff(args: argparse.Namespace) -> int:
    """0: no side blamed; 1: a side is wrong (or fxoracle failed); the report says which."""
    from checker.oracle.diff.driver import DiffBar
    from checker.oracle.diff.report import render_text

    if not args.paths and args.random <= 0:
        raise FxOracleError("diff: give model files and/or --random N")
    inputs = [*args.paths, *plugin_sources(args.against)]
    checked = check_outputs([(args.json, "diff")], folders=[args.repro_dir], inputs=inputs)
    with DiffBar() as bar, stdout_to_stderr():
        report = _diffed(args, bar, checked.folders[0])
    if args.json != "-":
        _print(render_text(report, debug=args.debug))
    if checked.files[0]:
        write_atomically(checked.files[0], to_json(report.to_json()))
    return 1 if report.fails_on(args.fail_on) else 0


def _diffed(args: argparse.Namespace, bar: DiffBar, repro_dir: Path | None) -> DiffReport:
    """The diff of every model asked for, in this process or on `--workers` processes;
    `repro_dir` resolved (FIL-9)."""
    from checker.oracle.diff.driver import run_diff
    from checker.oracle.diff.workers import DiffArgs, isolates, model_refs, run_diff_pool

    isolated = isolates(args.device, len(args.paths) + args.random)
    if args.workers > 1 or isolated:
        refs = model_refs(args.paths, args.random, args.seed)
        task = DiffArgs(args.against, args.component, args.strict_order,
                        None if repro_dir is None else str(repro_dir),
                        device=args.device)  # fmt: skip
        return run_diff_pool(refs, task, args.workers, progress=bar, isolated=isolated)
    names = model_names(args.paths)  # unique in the report and as repro names (DIF-15)
    models = [load_model_file(p, n) for p, n in zip(args.paths, names, strict=True)]
    return run_diff(models, args.against, args.component, args.random, args.seed,
                    repro_dir, progress=bar, strict_order=args.strict_order,
                    device=args.device)  # fmt: skip


def _run_fuzz(args: argparse.Namespace) -> int:
    """0: no bug of fxoracle found; 1: an oracle error or a divergence blamed on it (DIF-9), or
    with `--fail-on plugin` one blamed on the side under test (DIF-32)."""
    from checker.oracle.campaign.fuzz import CampaignBar, run_campaign

    if args.out == "-":  # while it runs, stdout is redirected (what user code prints)
        raise FxOracleError("fuzz --out: a campaign is written to a file, not to stdout")
    inputs = plugin_sources(args.against)
    checked = check_outputs([(args.out, "fuzz")], folders=[args.repro_dir], inputs=inputs)
    out, repro_dir = checked.files[0], checked.folders[0]
    assert out is not None, "fuzz --out has a default"
    with CampaignBar(args.max_models) as bar, stdout_to_stderr():
        campaign = run_campaign(args.minutes, args.seed, out.path, against=args.against,
                                repro_dir=repro_dir, max_models=args.max_models, progress=bar,
                                workers=args.workers, ray=args.ray,
                                device=args.device)  # fmt: skip
    ours, theirs = campaign.fxoracle_bugs, campaign.other_blamed
    found = plural(len(campaign.findings), "signature")
    _print(f"{plural(campaign.models, 'model')}, {found} -> {args.out}\n")
    if ours:
        _print(f"fxoracle's own bugs (DIF-9): {', '.join(ours)}\n")
    if theirs:
        _print(f"blamed on {campaign.against}: {', '.join(theirs)}\n")
    return 1 if ours or (theirs and args.fail_on == "plugin") else 0


def _run_bench(args: argparse.Namespace) -> int:
    """A measurement: 0 whatever the targets say."""
    from checker.bench import campaign, dedup, detect, paths, regions

    json_out = check_outputs([(args.json, "bench")]).files[0]
    if args.size:
        return _run_size(json_out)
    json_path = None if json_out is None else json_out.path
    print(regions.run(args.sizes, args.repeat, args.kind, args.torch_max, json_path), end="")
    print(paths.run(args.sizes, args.repeat, args.kind, args.torch_max), end="")
    print(dedup.run(args.sizes), end="")
    if args.campaign_models > 0:
        print(campaign.run(args.campaign_models, 0), end="")
    if args.detect_models > 0:
        print(detect.run(tuple(args.detect_seeds), models=args.detect_models), end="")
    return 0


def _run_size(json_out: Output | None) -> int:
    """`bench --size`: a measurement, 0 whatever the limits say."""
    from checker.bench import size

    with stdout_to_stderr():
        report = size.run(BUNDLED_EXAMPLE, "the bundled example (checker/examples/transformer.py)")
    if json_out is None or json_out.given != "-":
        _print(report.text())
    if json_out:
        write_atomically(json_out, to_json(report.to_json()))
    return 0


def _run_course(args: argparse.Namespace) -> int:
    """`course list`; `course check ID FILE`: 0 right, 1 wrong; `--solution` prints the
    shipped answer (exit 0 when no FILE was given)."""
    from checker.course import catalogue

    if args.course_command == "list":
        _print(catalogue.listing())
        return 0
    catalogue.exercise(args.exercise)  # an unknown id is bad input before any work
    if args.file is None and not args.solution:
        raise FxOracleError(f"course check {args.exercise}: give your answer file (or --solution)")
    code = 0
    if args.file is not None:
        json_out = check_outputs([(args.json, "course")], inputs=[args.file]).files[0]
        path = Path(args.file)
        with stdout_to_stderr():
            marking = catalogue.check_file(args.exercise, path)
        if args.json != "-":
            _print(catalogue.render_text(args.exercise, path, marking))
        if json_out:
            write_atomically(json_out, to_json(catalogue.to_json(args.exercise, path, marking)))
        code = 0 if marking.right else 1
    if args.solution:
        _print(catalogue.solution(args.exercise))
    return code


def _print(text: str) -> None:
    """A text report on stdout, user-controlled names in it escaped (FIL-10); a stdout that
    is closed or full is bad input (exit 2), not a traceback."""
    write_atomically("-", shown_lines(text))


def _note(text: str) -> None:
    """What was done other than the user may expect, one line on stderr (`.pt2` inputs)."""
    print(f"fxoracle: note: {text}", file=sys.stderr)


def _exit_is_an_error(args: argparse.Namespace) -> int:
    """`_run`, where a `SystemExit` (or another `BaseException` but Ctrl-C) can only come from
    a user's code that escaped every guard (a model's forward, a plug-in's method): bad input,
    one line (FIL-4)."""
    try:
        with time_limit_set(getattr(args, "time_limit", None)):
            return _run(args)
    except (Exception, KeyboardInterrupt):
        raise
    except BaseException as e:
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
    """Entry point of the `fxoracle` console script: as a command (no `argv`) it runs in a
    supervised child, so no user code can change its exit status (FIL-11)."""
    if argv is None:
        return supervised(lambda: _main(sys.argv[1:]))
    return _main(argv)


def _main(argv: Sequence[str]) -> int:
    argv = list(argv)
    debug = "--debug" in argv
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # `--help`: argparse printed it and asks for this status
            return e.code if isinstance(e.code, int) else 0
        with _quiet(not debug):
            return _exit_is_an_error(args)
    except FxOracleError as e:
        if debug:
            raise
        print(f"fxoracle: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fxoracle: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
