"""The `fxoracle` command line: verify, diff, explain (README "Usage").

Bad input prints one line on stderr and exits 2 (a traceback only with `--debug`); a failed check
exits 1; success exits 0. Reports are written atomically: a temporary file renamed into place.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from reference.errors import FxOracleError

BUNDLED_EXAMPLE = Path(__file__).parent / "examples" / "transformer.py"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as FxOracleError (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise FxOracleError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fxoracle", description="Reference dedup pipeline and checker.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    verify = sub.add_parser("verify", help="capture, key, expand and report a model's regions")
    verify.add_argument(
        "path", nargs="?", help="model file, .pt2 or GraphModule file (default: bundled example)"
    )
    verify.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    verify.add_argument("--dynamic", action="store_true", help="capture with dynamic shapes")
    verify.add_argument("--split", metavar="POLICY", help="also split: per-region or every-N")
    verify.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    verify.add_argument("--debug", action="store_true", help="show tracebacks")
    diff = sub.add_parser("diff", help="diff an implementation against the reference")
    diff.add_argument("paths", nargs="*", help="model files (default: none; use --random)")
    diff.add_argument("--against", required=True, help="torch, torch-simple or module:attr")
    diff.add_argument(
        "--component", default="all", choices=["tracker", "dedup", "sort", "split", "all"]
    )
    diff.add_argument("--random", type=int, default=0, metavar="N", help="N random models too")
    diff.add_argument("--seed", type=int, default=0, help="seed of the random models")
    diff.add_argument("--repro-dir", metavar="DIR", help="where minimized repros are written")
    diff.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    diff.add_argument("--debug", action="store_true", help="show tracebacks")
    explain = sub.add_parser("explain", help="narrate the expansion step by step")
    explain.add_argument("path", nargs="?", help="model file (default: the bundled example)")
    explain.add_argument("--group", type=int, help="only this group (index in the report)")
    explain.add_argument("--json", metavar="PATH", help="write the steps as JSON ('-': stdout)")
    explain.add_argument("--html", metavar="PATH", help="draw the regions growing, step by step")
    explain.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` ('-' is stdout) so that no half-written file is ever left."""
    if path == "-":
        sys.stdout.write(text)
        return
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be read
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def to_json(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _run(args: argparse.Namespace) -> int:
    from checker import explain as explain_mod
    from checker import verify as verify_mod

    if args.command == "diff":
        return _run_diff(args)
    path = Path(args.path) if args.path else BUNDLED_EXAMPLE
    if args.command == "verify":
        report = verify_mod.run_verify(path, dynamic=args.dynamic, split=args.split)
        if args.json != "-":  # with `--json -` stdout carries the JSON alone
            print(verify_mod.render_text(report), end="")
        if args.json:
            write_atomically(args.json, to_json(report.to_json()))
        if args.html:
            write_atomically(args.html, verify_mod.html_of(report))
        return 0 if report.ok else 1
    lesson, original = explain_mod.run_explain(path, group=args.group)
    if args.json != "-":
        print(explain_mod.render_text(lesson), end="")
    if args.json:
        write_atomically(args.json, to_json(lesson.to_json()))
    if args.html:
        from checker.explain_html import render_explain_html

        write_atomically(args.html, render_explain_html(lesson, original.graph))
    return 0


def _run_diff(args: argparse.Namespace) -> int:
    """0: both sides agree; 1: a divergence (the report says which side is wrong)."""
    from checker.diff import render_text, run_diff

    if not args.paths and args.random <= 0:
        raise FxOracleError("diff: give model files and/or --random N")
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    paths = [Path(p) for p in args.paths]
    report = run_diff(paths, args.against, args.component, args.random, args.seed, repro_dir)
    if args.json != "-":
        print(render_text(report), end="")
    if args.json:
        write_atomically(args.json, to_json(report.to_json()))
    return 0 if report.agree else 1


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
            return _run(args)
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
