"""The exercise of spec chapter 11 (your own pass, a plug-in), checked by capturing the
exercise's model and reading the facts `CapturedGraph` gives a plug-in (`fxoracle course
check`)."""

from __future__ import annotations

import torch

from checker.course.marking import Answer, Exercise, Mark, Marking, same
from reference.dynamo.capture import capture
from reference.fx_helpers import flat_node_args

WRITERS = (("ADD_INPLACE", "add_"), ("SETITEM", "setitem"), ("ADD_OUT", "add"))


def writes(x: torch.Tensor, y: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """The exercise's model: an in-place add, a setitem with a tensor index, an `out=` add."""
    c = torch.empty_like(x)
    x.add_(y)
    y[i] = 0.5
    torch.add(x, y, out=c)
    return c * 2


def check_11_1(answer: Answer) -> Marking:
    graph = capture(writes, (torch.randn(4), torch.randn(4), torch.tensor([1, 2])))
    by_name = {n.name: n for n in graph.gm.graph.nodes}
    facts = graph.tracker.node_to_mutated_arg_positions
    marks: list[Mark] = []
    written: list[str] = []
    for asked, name in WRITERS:
        node = by_name[name]
        positions = tuple(facts.get(node, ()))
        flat = [a.name for a in flat_node_args(node)]
        written.extend(flat[p] for p in positions)
        why = f"{name}'s flat node arguments are {flat} (constants skipped, kwargs last)"
        marks.append(same(asked, answer.numbers(asked), positions, why))
    why = "the node at each position, in the order add_, setitem, add (DIF-21)"
    marks.append(same("WRITTEN", answer.names("WRITTEN"), tuple(written), why))
    return Marking(tuple(marks))


EXERCISES = (
    Exercise(
        "11.1",
        ("DIF-21", "EFF-1"),
        "ADD_INPLACE, SETITEM, ADD_OUT: lists of ints, the positions each writer's entry of "
        "node_to_mutated_arg_positions holds\nWRITTEN: list of the names of the nodes written, "
        "in the order add_, setitem, add",
        check_11_1,
    ),
)
