"""The `fxoracle` command line's arguments: one parser per command, every value checked as it is
parsed (spec chapter 10, FIL-5; README "Usage").

Counts are ASCII digits (`int` would take `١٢` and `²`), minutes a finite positive number, a
bad value is a usage error: `FxOracleError`, one line, exit 2, before any work.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import NoReturn

from checker.io.device import device_arg
from checker.io.user_code import DEFAULT_TIME_LIMIT_S
from checker.oracle.sides.sides import COMPONENTS
from reference.errors import FxOracleError

DIFF_HELP = """Run the reference and another implementation on the same captured graphs,
component by component, and say which side is wrong where they differ.

sides (--against):
  torch          torch's own tracker, apply_graph_deduplication, stable sort, split_module
  torch-simple   torch's split_module_simple (split only)
  reference      fxoracle against itself (a sanity check)
  module:attr    your implementation: an object or class with find_regions, deduplicate,
                 stable_sort and/or split (the contract: checker/oracle/protocol.py),
                 its module found in the working directory or on sys.path
  path/to/file.py:attr
                 the same, imported from that file
components (--component): tracker, dedup, sort, split, or all (those the side implements)
a model agrees when its only differences are free choices ("both correct", listed with why)
exit status: 0 when no side is blamed, 1 when a side is blamed or fxoracle itself failed, 2 on
bad input."""
FUZZ_OUT = """the findings file (default fuzz-findings.json); a campaign of the same seed and side
already there is continued from its next model, any other file is refused"""
Sub = argparse._SubParsersAction  # the type of `add_subparsers()`


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as FxOracleError (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise FxOracleError(f"{self.prog}: {message}")


def count(text: str) -> int:
    """A non-negative integer in ASCII digits (FIL-5)."""
    if not re.fullmatch(r"[0-9]+", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0, 1, 2, ...)")
    return int(text)


def positive(text: str) -> int:
    """A positive integer in ASCII digits (FIL-5)."""
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not at least 1")
    return value


def minutes(text: str) -> float:
    """A finite positive number of minutes (FIL-5): `nan` would never end a campaign."""
    return _finite_positive(text, "minutes")


def seconds(text: str) -> float:
    """A finite positive number of seconds (FIL-11)."""
    return _finite_positive(text, "seconds")


def _finite_positive(text: str, unit: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite positive number of {unit}")
    return value


def _device_option(parser: argparse.ArgumentParser) -> None:
    """`--device cpu|cuda|cuda:N` (FIL-8): parsed, and the device found, before any work."""
    parser.add_argument("--device", type=device_arg, metavar="cpu|cuda|cuda:N",
                        help="move the model and its inputs there before capture (default: "
                        "where the example inputs live)")  # fmt: skip


def _time_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--time-limit", type=seconds, metavar="SECONDS",
        help=f"the longest one call into user code may run (default {DEFAULT_TIME_LIMIT_S:g})",
    )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fxoracle", description="Reference dedup pipeline and checker.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _verify_parser(sub)
    _explain_parser(sub)
    _diff_parser(sub)
    _fuzz_parser(sub)
    _bench_parser(sub)
    _course_parser(sub)
    return parser


def _verify_parser(sub: Sub[_Parser]) -> None:
    verify = sub.add_parser("verify", help="what deduplicates, what is refused and why, proved")
    verify.add_argument("path", nargs="?", help="model file, .pt2, GraphModule file or "
                        "torch.save file (default: bundled example)")  # fmt: skip
    verify.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    verify.add_argument("--dynamic", action="store_true", help="capture with dynamic shapes")
    verify.add_argument("--split", metavar="POLICY", help="also split: per-region or every-N")
    verify.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    verify.add_argument(
        "--trust-pickles", action="store_true",
        help="load pickles a .pt2 or torch.save file holds (they can run any code)",
    )  # fmt: skip
    _device_option(verify)
    verify.add_argument("--debug", action="store_true", help="show tracebacks")
    _time_limit(verify)


def _explain_parser(sub: Sub[_Parser]) -> None:
    explain = sub.add_parser("explain", help="narrate the expansion step by step")
    explain.add_argument("path", nargs="?", help="model file (default: the bundled example)")
    explain.add_argument("--group", type=count, help="only this group (index in the report)")
    explain.add_argument("--json", metavar="PATH", help="write the steps as JSON ('-': stdout)")
    explain.add_argument("--html", metavar="PATH", help="draw the regions growing, step by step")
    _device_option(explain)
    explain.add_argument("--debug", action="store_true", help="show tracebacks")
    _time_limit(explain)


def _diff_parser(sub: Sub[_Parser]) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    diff = sub.add_parser("diff", help="diff an implementation against the reference",
                          description=DIFF_HELP, formatter_class=raw)  # fmt: skip
    diff.add_argument("paths", nargs="*", help="model files (default: none; use --random)")
    diff.add_argument(
        "--against",
        required=True,
        help="torch, torch-simple, reference, module:attr or path/to/file.py:attr",
    )
    diff.add_argument("--component", default="all", choices=[*map(str, COMPONENTS), "all"])
    diff.add_argument("--random", type=count, default=0, metavar="N", help="N random models too")
    diff.add_argument("--seed", type=count, default=0, help="seed of the random models")
    diff.add_argument("--repro-dir", metavar="DIR", help="where minimized repros are written")
    diff.add_argument("--json", metavar="PATH", help="write the report as JSON ('-': stdout)")
    diff.add_argument(
        "--strict-order", action="store_true",
        help="compare node positions too (dedup's node order, the order a split calls its "
        "partitions in), not only what the graphs compute",
    )  # fmt: skip
    diff.add_argument(
        "--fail-on", default="any", choices=["any", "reference", "other"],
        help="exit 1 when this side is blamed (any: either; reference: fxoracle's own bugs)",
    )  # fmt: skip
    diff.add_argument("--workers", type=positive, default=1, metavar="N",
                      help="processes diffing the models (default 1: this process)")  # fmt: skip
    _device_option(diff)
    diff.add_argument("--debug", action="store_true", help="show tracebacks")
    _time_limit(diff)


def _fuzz_parser(sub: Sub[_Parser]) -> None:
    fuzz = sub.add_parser("fuzz", help="a differential campaign on random models")
    fuzz.add_argument("--minutes", type=minutes, default=1.0, help="campaign length")
    fuzz.add_argument("--seed", type=count, default=0, help="campaign seed")
    fuzz.add_argument("--out", default="fuzz-findings.json", help=FUZZ_OUT)
    fuzz.add_argument(
        "--against",
        default="torch",
        help="torch, torch-simple, module:attr or path/to/file.py:attr",
    )
    fuzz.add_argument("--repro-dir", metavar="DIR", help="write a minimized repro per finding")
    fuzz.add_argument(
        "--fail-on", default="fxoracle", choices=["fxoracle", "plugin"],
        help="exit 1 on fxoracle's own bugs (default), or also when the side under test is blamed",
    )  # fmt: skip
    fuzz.add_argument("--max-models", type=count, help="stop after this many models in all")
    fuzz.add_argument(
        "--workers", type=positive, metavar="N",
        help="processes diffing models (default: every core; 1: this process only)",
    )  # fmt: skip
    fuzz.add_argument(
        "--ray", metavar="ADDRESS",
        help="run on the Ray cluster at HOST:PORT, or 'local' (needs fxoracle[cluster])",
    )  # fmt: skip
    _device_option(fuzz)
    fuzz.add_argument("--debug", action="store_true", help="show tracebacks")
    _time_limit(fuzz)


def _bench_parser(sub: Sub[_Parser]) -> None:
    bench = sub.add_parser("bench", help="region finding and deduplication against torch")
    bench.add_argument("--sizes", type=positive, nargs="+", default=[2400, 9600, 38000],
                       metavar="N")  # fmt: skip
    bench.add_argument("--repeat", type=positive, default=3, help="best of N timed calls")
    bench.add_argument("--kind", choices=["transformer", "mlp"], default="transformer")
    bench.add_argument("--torch-max", type=count, default=10000, metavar="NODES")
    bench.add_argument("--json", metavar="PATH", help="also write the region numbers here")
    bench.add_argument("--campaign-models", type=count, default=120, metavar="N",
                       help="campaign throughput on 1 and 2 workers (0: skip)")  # fmt: skip
    bench.add_argument(
        "--detect-models",
        type=count,
        default=40,
        metavar="N",
        help="time to blame each planted bug, N random models (0: skip)",
    )
    bench.add_argument("--detect-seeds", type=count, nargs="+", default=[0, 1, 2], metavar="S",
                       help="the seeds of those random models")  # fmt: skip
    bench.add_argument(
        "--size", action="store_true",
        help="only measure the reference's size: reach of deduplicate on the bundled example, "
        "code lines per concept against torch's (issue 33); --json writes them",
    )  # fmt: skip
    bench.add_argument("--debug", action="store_true", help="show tracebacks")


COURSE_HELP = """The course's exercises (specs/course.md), checked on your own answer file.

An answer file is a Python file defining the names the exercise asks for (`fxoracle course
list` shows them); `course check` runs it, computes the truth with fxoracle's own code and says,
fact by fact, what is right or wrong and why.
exit status: 0 right, 1 wrong, 2 bad input (no such exercise or file, a name missing)."""


def _course_parser(sub: Sub[_Parser]) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    course = sub.add_parser("course", help="check your answer to an exercise of the course",
                            description=COURSE_HELP, formatter_class=raw)  # fmt: skip
    course.add_argument("--debug", action="store_true", help="show tracebacks")
    what = course.add_subparsers(dest="course_command", required=True, parser_class=_Parser)
    check = what.add_parser("check", help="check an answer file: right or wrong, and why")
    check.add_argument("exercise", metavar="CHAPTER.EXERCISE", help="e.g. 02.1")
    check.add_argument("file", nargs="?", help="your answer file")
    check.add_argument("--solution", action="store_true",
                       help="print the shipped answer (after checking FILE, if given)")  # fmt: skip
    check.add_argument("--json", metavar="PATH", help="write the verdict as JSON ('-': stdout)")
    check.add_argument("--debug", action="store_true", help="show tracebacks")
    _time_limit(check)
    listing = what.add_parser("list", help="every exercise and what its answer file defines")
    listing.add_argument("--debug", action="store_true", help="show tracebacks")
