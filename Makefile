# fxoracle: every target sets up .venv by itself on a fresh clone.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.fxoracle-installed
GRAPH   ?=
ARGS    ?=

.PHONY: verify test lint typecheck pytest bench fuzz clean setup specs

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@# torch first: the CPU wheel cached on these machines (a bare `torch` pulls a CUDA build)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

verify: $(STAMP)
	$(VENV)/bin/fxoracle verify $(GRAPH) $(ARGS)

test: lint typecheck pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check reference checker tests
	$(VENV)/bin/ruff format --check reference checker tests

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict

pytest: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile

fuzz: $(STAMP)
	$(PY) -m checker.fuzz --minutes $(or $(MINUTES),60) --seed $(or $(SEED),0) \
		--out fuzz-findings.json --repro-dir fuzz-repros $(ARGS)

bench: $(STAMP)
	$(PY) -m checker.bench $(ARGS)
	$(PY) -m checker.bench_dedup

specs: $(STAMP)
	$(PY) -m tests.spec_examples

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
