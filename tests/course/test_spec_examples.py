"""Every worked example in specs/ is exactly what its script prints (issue 8)."""

from __future__ import annotations

import pytest

from tests.course.spec_examples import examples, run

EXAMPLES = examples()


def test_chapters_have_examples() -> None:
    assert len(EXAMPLES) >= 3
    assert all(e.script.is_file() for e in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.script.stem for e in EXAMPLES])
def test_worked_example_is_current(example: object) -> None:
    """A chapter's example block equals its script's output (`make specs` regenerates)."""
    from tests.course.spec_examples import Example

    assert isinstance(example, Example)
    assert run(example.script) == example.expected, f"run `make specs`: {example.chapter.name}"
