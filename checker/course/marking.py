"""Marking a learner's answer file (`fxoracle course check`, `specs/course.md`).

An answer file is a Python file that defines the names its exercise asks for (`EQUAL_KEYS =
{...}`, `def build(): ...`). It is run as a model file is (what it raises is bad input, FIL-4);
`Answer` reads the names with their types checked (a missing or mistyped name is bad input: exit
2, one line). Each exercise computes the truth by running fxoracle's own code on the exercise's
graph, never from a stored answer, and compares: one `Mark` per asked fact, with why, whatever
the learner wrote. A file is right when every mark is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from checker.io.model_file import load_namespace
from reference.errors import FxOracleError

# the corpus of the repository this package sits in: the course is read in a checkout
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"


@dataclass(frozen=True, slots=True)
class Mark:
    """One fact of an answer: what it is, whether the learner got it right, and why."""

    fact: str
    right: bool
    why: str


@dataclass(frozen=True, slots=True)
class Marking:
    """An answer file's marking: one mark per fact; right when every mark is."""

    marks: tuple[Mark, ...]

    @property
    def right(self) -> bool:
        return all(m.right for m in self.marks)


@dataclass(frozen=True, slots=True)
class Answer:
    """The names an answer file defines, read with their types checked."""

    where: str
    module: str  # the module name the file runs as (a plug-in answer is loaded by it)
    values: Mapping[str, Any]

    def raw(self, name: str, kinds: type | tuple[type, ...], what: str) -> Any:
        if name not in self.values:
            raise FxOracleError(f"{self.where}: defines no `{name}` ({what})")
        value = self.values[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _kinds(kinds)):
            raise FxOracleError(f"{self.where}: `{name}` must be {what}, not {value!r}")
        return value

    def flag(self, name: str) -> bool:
        return bool(self.raw(name, bool, "True or False"))

    def number(self, name: str) -> int:
        return int(self.raw(name, int, "an int"))

    def real(self, name: str) -> float:
        return float(self.raw(name, (int, float), "a number"))

    def text(self, name: str) -> str:
        return str(self.raw(name, str, "a string"))

    def names(self, name: str) -> tuple[str, ...]:
        """A list, tuple or set of strings, as a tuple (a set sorted)."""
        value = self.raw(name, (list, tuple, set, frozenset), "a list of names")
        if not all(isinstance(v, str) for v in value):
            raise FxOracleError(f"{self.where}: `{name}` must hold names (strings), not {value!r}")
        return tuple(sorted(value)) if isinstance(value, set | frozenset) else tuple(value)

    def numbers(self, name: str) -> tuple[int, ...]:
        """A list or tuple of ints, as a tuple."""
        value = self.raw(name, (list, tuple), "a list of ints")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise FxOracleError(f"{self.where}: `{name}` must hold ints, not {value!r}")
        return tuple(value)

    def choice(self, name: str, choices: Collection[str]) -> str:
        """One of `choices`, by its label."""
        value = self.text(name)
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            raise FxOracleError(f"{self.where}: `{name}` is {value!r}; choose one of {allowed}")
        return value

    def chosen(self, name: str, choices: Collection[str]) -> frozenset[str]:
        """A set of names, each one of `choices`."""
        picked = frozenset(self.names(name))
        unknown = sorted(picked - set(choices))
        if unknown:
            allowed = ", ".join(repr(c) for c in choices)
            raise FxOracleError(
                f"{self.where}: `{name}` holds {unknown[0]!r}; choose from {allowed}"
            )
        return picked

    def function(self, name: str) -> Callable[..., Any]:
        value = self.raw(name, object, "a function")
        if not callable(value):
            raise FxOracleError(f"{self.where}: `{name}` must be a function, not {value!r}")
        return cast("Callable[..., Any]", value)


def _kinds(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def read_answer(path: Path) -> Answer:
    """Run the answer file as a model file is run and keep what it defines."""
    loaded = load_namespace(path)
    return Answer(str(path), loaded.module, loaded.values)


def same(fact: str, given: object, truth: object, why: str, *, shown: str = "") -> Mark:
    """The mark of a fact compared exactly. `why` is the rule the fact follows, told on a
    wrong answer next to what the learner wrote, so it must not state the right answer;
    `shown` (default `why`) is told on a right one and may show what the code computed."""
    if given == truth:
        return Mark(fact, True, shown or why)
    return Mark(fact, False, f"you wrote {_shown(given)}; {why}")


def _shown(value: object) -> str:
    if isinstance(value, frozenset | set):
        return "{" + ", ".join(repr(v) for v in sorted(value, key=repr)) + "}" if value else "{}"
    return repr(value)


def names_of(nodes: Sequence[Any]) -> tuple[str, ...]:
    """Node names, in the given order."""
    return tuple(n.name for n in nodes)


@dataclass(frozen=True, slots=True)
class Exercise:
    """One exercise of the course: `ident` is `CHAPTER.N` (`02.1`), `asks` what its answer
    file defines (one line per name, as the chapter states it), `check` marks such a file by
    running fxoracle's code on the exercise's own graph."""

    ident: str
    ids: tuple[str, ...]
    asks: str
    check: Callable[[Answer], Marking]
