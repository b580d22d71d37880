"""A model run from text is a module of its own (spec chapter 10, FIL-15).

The shrinker builds every candidate under one name (`candidate`). Dynamo looks a module up by
its name once per process (`functools.cache`), and torch 2.11 and 2.12 reach the globals of a
function with no source file through that name: the first candidate's module answered for every
later one, whose `blk` it did not have, and a repro was refused after an unrelated diff had run.
"""

from __future__ import annotations

import importlib.abc
import inspect
import sys

import pytest
import torch

from checker.io.model_file import load_model_file, model_from_source, model_tried
from reference.dynamo.capture import capture
from tests.support.paths import CORPUS

pytestmark = pytest.mark.spec("FIL-15")
NO_HELPER = """import torch
def model(x):
    return torch.sin(x).cos() + torch.sin(x).cos()
example_inputs = (torch.ones(3),)
"""
HELPER = """import torch
def blk(x):
    return torch.sin(x).cos()
def model(x):
    return blk(x) + blk(x)
example_inputs = (torch.ones(3),)
"""


def test_fil15_two_texts_under_one_name_are_two_modules() -> None:
    first, second = (model_from_source("candidate", t) for t in (NO_HELPER, HELPER))
    names = [m.model.__module__ for m in (first, second)]
    assert names[0] != names[1] and all(n.startswith("fxoracle_model_candidate_") for n in names)
    assert [sys.modules[n].__dict__["model"] for n in names] == [first.model, second.model]
    again = model_from_source("candidate", HELPER)  # the same text: the same name, every run
    assert again.model.__module__ == names[1]


def test_fil15_a_model_file_s_module_is_named_by_its_path_and_text() -> None:
    model = load_model_file(CORPUS / "d01_single_subgraph.py")
    assert model.model.__module__.startswith("fxoracle_model_d01_single_subgraph_")
    assert inspect.getsourcefile(model.model) == str(CORPUS / "d01_single_subgraph.py")


def test_fil15_torch_finds_the_source_of_a_model_built_from_text() -> None:
    """`inspect.getsourcefile` is how torch 2.11 and 2.12 tell a function from a builtin."""
    built = model_from_source("candidate", HELPER)
    assert inspect.getsourcefile(built.model) == "<candidate>"
    loader = sys.modules[built.model.__module__].__loader__
    assert isinstance(loader, importlib.abc.InspectLoader)
    assert loader.get_source(built.model.__module__) == HELPER


def test_fil15_a_model_captures_after_another_of_its_name() -> None:
    """The leak itself: on torch 2.11 the second capture failed (`module
    'fxoracle_model_candidate' has no attribute 'blk'`); every release captures both."""
    for text in (NO_HELPER, HELPER):
        built = model_from_source("candidate", text)
        graph = capture(built.model, built.example_inputs)
        (got,) = graph.gm(*graph.example_inputs)
        torch.testing.assert_close(got, built.model(*built.example_inputs))


def test_fil15_a_tried_text_s_module_is_dropped_after_it() -> None:
    """The shrinker's candidates: each a module of its own while tried, none kept after."""
    with model_tried("candidate", HELPER) as tried:
        name = tried.model.__module__
        assert sys.modules[name].__dict__["model"] is tried.model
    assert name not in sys.modules
