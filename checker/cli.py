"""The `fxoracle` command line: verify, explain, diff, fuzz, bench (README "Usage").

Bad input prints one line on stderr and exits 2 (a traceback only with `--debug`); a failed check
exits 1; success exits 0. Reports are written atomically: a temporary file renamed into place.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from checker.io.model_file import load_model_file
from checker.io.reports import to_json, write_atomically
from checker.oracle.divergence import COMPONENTS
from checker.tools.pipeline import Split
from reference.errors import FxOracleError

if TYPE_CHECKING:
    from checker.oracle.diff import DiffReport
    from checker.oracle.diff_bar import DiffBar

BUNDLED_EXAMPLE = Path(__file__).parent / "examples" / "transformer.py"
DIFF_HELP = """Run the reference and another implementation on the same captured graphs,
component by component, and say which side is wrong where they differ.

sides (--against):
  torch          torch's own tracker, apply_graph_deduplication, stable sort, split_module
  torch-simple   torch's split_module_simple (split only)
  reference      fxoracle against itself (a sanity check)
  module:attr    your implementation: an object or class with find_regions, deduplicate,
                 stable_sort and/or split (the contract: checker/oracle/protocol.py)
components (--component): tracker, dedup, sort, split, or all (those the side implements)
exit status: 0 when no side is blamed ("both correct" differences are listed, not failed),
1 when a side is blamed or fxoracle itself failed, 2 on bad input."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as FxOracleError (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise FxOracleError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fxoracle", description="Reference dedup pipeline and checker.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _verify_parser(sub)
    _explain_parser(sub)
    _diff_parser(sub)
    _fuzz_parser(sub)
    _bench_parser(sub)
    return parser


def _verify_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    verify = sub.add_parser("verify", help="what deduplicates, what is refused and why, proved")
    verify.add_argument(
        "path", nargs="?", help="model file, .pt2 or GraphModule file (default: bundled example)"
    )
    verify.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    verify.add_argument("--dynamic", action="store_true", help="capture with dynamic shapes")
    verify.add_argument("--split", metavar="POLICY", help="also split: per-region or every-N")
    verify.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    verify.add_argument("--debug", action="store_true", help="show tracebacks")


def _explain_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    explain = sub.add_parser("explain", help="narrate the expansion step by step")
    explain.add_argument("path", nargs="?", help="model file (default: the bundled example)")
    explain.add_argument("--group", type=int, help="only this group (index in the report)")
    explain.add_argument("--json", metavar="PATH", help="write the steps as JSON ('-': stdout)")
    explain.add_argument("--html", metavar="PATH", help="draw the regions growing, step by step")
    explain.add_argument("--debug", action="store_true", help="show tracebacks")


def _diff_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    diff = sub.add_parser("diff", help="diff an implementation against the reference",
                          description=DIFF_HELP, formatter_class=raw)  # fmt: skip
    diff.add_argument("paths", nargs="*", help="model files (default: none; use --random)")
    diff.add_argument(
        "--against", required=True, help="torch, torch-simple, reference or module:attr"
    )
    diff.add_argument("--component", default="all", choices=[*COMPONENTS, "all"])
    diff.add_argument("--random", type=int, default=0, metavar="N", help="N random models too")
    diff.add_argument("--seed", type=int, default=0, help="seed of the random models")
    diff.add_argument("--repro-dir", metavar="DIR", help="where minimized repros are written")
    diff.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    diff.add_argument(
        "--strict-order", action="store_true",
        help="compare node positions too, not only what the graphs compute",
    )  # fmt: skip
    diff.add_argument(
        "--fail-on", default="any", choices=["any", "reference", "other"],
        help="exit 1 when this side is blamed (any: either; reference: fxoracle's own bugs)",
    )  # fmt: skip
    diff.add_argument("--workers", type=int, default=1, metavar="N",
                      help="processes diffing the models (default 1: this process)")  # fmt: skip
    diff.add_argument("--debug", action="store_true", help="show tracebacks")


def _fuzz_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    fuzz = sub.add_parser("fuzz", help="a differential campaign on random models")
    fuzz.add_argument("--minutes", type=float, default=1.0, help="campaign length")
    fuzz.add_argument("--seed", type=int, default=0, help="campaign seed")
    fuzz.add_argument("--out", default="fuzz-findings.json", help="the findings file")
    fuzz.add_argument("--against", default="torch", help="torch, torch-simple or module:attr")
    fuzz.add_argument("--repro-dir", metavar="DIR", help="write a minimized repro per finding")
    fuzz.add_argument("--max-models", type=int, help="stop after this many models")
    fuzz.add_argument(
        "--workers", type=int, metavar="N",
        help="processes diffing models (default: every core; 1: this process only)",
    )  # fmt: skip
    fuzz.add_argument(
        "--ray", metavar="ADDRESS",
        help="run on the Ray cluster at HOST:PORT, or 'local' (needs fxoracle[cluster])",
    )  # fmt: skip
    fuzz.add_argument("--debug", action="store_true", help="show tracebacks")


def _bench_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    bench = sub.add_parser("bench", help="region finding and deduplication against torch")
    bench.add_argument("--sizes", type=int, nargs="+", default=[2400, 9600, 38000], metavar="N")
    bench.add_argument("--repeat", type=int, default=3, help="best of N timed calls")
    bench.add_argument("--kind", choices=["transformer", "mlp"], default="transformer")
    bench.add_argument("--torch-max", type=int, default=10000, metavar="NODES")
    bench.add_argument("--json", metavar="PATH", help="also write the region numbers here")
    bench.add_argument("--campaign-models", type=int, default=120, metavar="N",
                       help="campaign throughput on 1 and 2 workers (0: skip)")  # fmt: skip
    bench.add_argument("--debug", action="store_true", help="show tracebacks")


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
        case _:
            return _run_bench(args)


def _run_verify(args: argparse.Namespace) -> int:
    from checker.tools import verify
    from checker.tools.render.html_report import verify_page

    path = Path(args.path) if args.path else BUNDLED_EXAMPLE
    split = Split.parse(args.split) if args.split else None
    report = verify.run_verify(path, dynamic=args.dynamic, split=split)
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
    lesson, original = explain.run_explain(path, group=args.group)
    if args.json != "-":
        print(explain.render_text(lesson), end="")
    if args.json:
        write_atomically(args.json, to_json(lesson.to_json()))
    if args.html:
        write_atomically(args.html, render_explain_html(lesson, original.graph))
    return 0


def _run_diff(args: argparse.Namespace) -> int:
    """0: no side blamed; 1: a side is wrong (or fxoracle failed); the report says which."""
    from checker.oracle.diff import render_text
    from checker.oracle.diff_bar import DiffBar

    if not args.paths and args.random <= 0:
        raise FxOracleError("diff: give model files and/or --random N")
    if args.workers < 1:
        raise FxOracleError("diff: --workers must be at least 1")
    with DiffBar() as bar:
        report = _diffed(args, bar)
    if args.json != "-":
        print(render_text(report, debug=args.debug), end="")
    if args.json:
        write_atomically(args.json, to_json(report.to_json()))
    return 1 if report.fails_on(args.fail_on) else 0


def _diffed(args: argparse.Namespace, bar: DiffBar) -> DiffReport:
    """The diff of every model asked for, in this process or on `--workers` processes."""
    from checker.oracle.diff import run_diff
    from checker.oracle.diff_pool import DiffArgs, model_refs, run_diff_pool

    if args.workers > 1:
        refs = model_refs(args.paths, args.random, args.seed)
        task = DiffArgs(args.against, args.component, args.strict_order, args.repro_dir)
        return run_diff_pool(refs, task, args.workers, progress=bar)
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    models = [load_model_file(p) for p in args.paths]
    return run_diff(models, args.against, args.component, args.random, args.seed,
                    repro_dir, progress=bar, strict_order=args.strict_order)  # fmt: skip


def _run_fuzz(args: argparse.Namespace) -> int:
    """0: no bug of fxoracle found; 1: an oracle error or a divergence blamed on it (DIF-9)."""
    from checker.oracle.campaign_bar import CampaignBar
    from checker.oracle.fuzz import run_campaign

    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    with CampaignBar(args.max_models) as bar:
        campaign = run_campaign(args.minutes, args.seed, Path(args.out), against=args.against,
                                repro_dir=repro_dir, max_models=args.max_models, progress=bar,
                                workers=args.workers, ray=args.ray)  # fmt: skip
    ours = campaign.fxoracle_bugs
    print(f"{campaign.models} models, {len(campaign.findings)} signatures -> {args.out}")
    if ours:
        print(f"fxoracle's own bugs (DIF-9): {', '.join(ours)}")
    return 1 if ours else 0


def _run_bench(args: argparse.Namespace) -> int:
    """A measurement: 0 whatever the targets say."""
    from checker.bench import campaign, dedup, regions

    if args.repeat < 1 or min(args.sizes) < 1:
        raise FxOracleError("bench: --repeat and --sizes must be positive")
    json_path = Path(args.json) if args.json else None
    print(regions.run(args.sizes, args.repeat, args.kind, args.torch_max, json_path), end="")
    print(dedup.run(args.sizes), end="")
    if args.campaign_models > 0:
        print(campaign.run(args.campaign_models, 0), end="")
    return 0


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
