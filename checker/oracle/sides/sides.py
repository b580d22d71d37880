"""The two sides of a diff: the reference and the implementation under test, with the components
both run (spec chapter 08, DIF-1).

`make_sides(against, component)` loads `against` (`checker.oracle.sides.loading.load_impl`) and
keeps the components it implements; `Sides` is what every comparison, repro and worker is given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from checker.oracle.protocol import parts_of
from checker.oracle.sides.cases import HOSTILE_SPLIT_CASES, SPLIT_CASES, SplitCase
from checker.oracle.sides.impls import ReferenceImpl
from checker.oracle.sides.loading import Against, label_of, load_impl
from reference.errors import FxOracleError


class Component(StrEnum):
    """A part of an implementation, compared on its own (`protocol.PARTS` names them)."""

    TRACKER = "tracker"
    DEDUP = "dedup"
    SORT = "sort"
    SPLIT = "split"


COMPONENTS = tuple(Component)


@dataclass(frozen=True, slots=True)
class Sides:
    """The reference, the implementation under test (`against`: as given to `--against` and
    where it was found, `label`: as reports name it), the components to run and the split
    cases."""

    reference: ReferenceImpl
    other: object  # an implementation: some of the Protocols of `checker.oracle.protocol`
    against: Against
    label: str
    components: tuple[Component, ...]
    split_cases: tuple[SplitCase, ...] = SPLIT_CASES
    strict_order: bool = False  # compare positions, not meanings (DIF-3)

    def only(self, component: Component) -> Sides:
        return replace(self, components=(component,))


def make_sides(
    against: str, component: str = "all", hostile: bool = False, strict_order: bool = False
) -> Sides:
    """Load `against` and choose the components both sides implement (DIF-1)."""
    if component != "all" and component not in COMPONENTS:
        raise FxOracleError(f"unknown component {component!r}: {', '.join(COMPONENTS)} or all")
    loaded = load_impl(against)
    return _sides(loaded.impl, loaded.against, label_of(against), component, hostile,
                  strict_order)  # fmt: skip


def sides_for(impl: object, component: str = "all", strict_order: bool = False) -> Sides:
    """The reference against `impl`, an implementation object (or a class, instantiated) a
    plug-in author holds, labelled `module:Class` (DIF-30)."""
    if component != "all" and component not in COMPONENTS:
        raise FxOracleError(f"unknown component {component!r}: {', '.join(COMPONENTS)} or all")
    found = impl() if isinstance(impl, type) else impl
    kind = type(found)
    label = f"{kind.__module__}:{kind.__qualname__}"
    return _sides(found, Against(label), label, component, False, strict_order)


def _sides(
    impl: object, against: Against, label: str, component: str, hostile: bool,
    strict_order: bool,
) -> Sides:  # fmt: skip
    wanted = COMPONENTS if component == "all" else (Component(component),)
    chosen = tuple(c for c in wanted if c in parts_of(impl))
    if not chosen:
        raise FxOracleError(f"--against {label} implements no part of component {component}")
    cases = SPLIT_CASES + (HOSTILE_SPLIT_CASES if hostile else ())
    return Sides(ReferenceImpl(), impl, against, label, chosen, cases, strict_order)


def skipped_components(sides: Sides, component: str) -> tuple[Component, ...]:
    """The components asked for that the other side does not implement."""
    wanted = COMPONENTS if component == "all" else (Component(component),)
    return tuple(c for c in wanted if c not in sides.components)
