# fxoracle: every target sets up its venv by itself on a fresh clone.
# TORCH picks the torch release: 2.13.0 (default: the CPU wheel cached on these machines, in
# .venv), or 2.14.1 / 2.15.0, each in its own venv under .venvs/ (CUDA builds that run on the CPU).
TORCH   ?= 2.13.0
VENV    := $(if $(filter 2.13.0,$(TORCH)),.venv,.venvs/torch-$(TORCH))
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.fxoracle-installed
# pip on these machines caps torch at 2.14.1 (/etc/xdg/pip); a newer release lifts it per command
PIPENV  := $(if $(filter 2.15%,$(TORCH)),PIP_CONSTRAINT=/dev/null,)
GRAPH   ?=
ARGS    ?=
COMPAT  := 2.14.1 2.15.0

.PHONY: verify test test-models test-cuda lint typecheck pytest bench fuzz clean setup specs golden \
	compat corpus-diff

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@# torch first: a bare `torch` (or a range a newer release satisfies) pulls a CUDA build
	$(PIPENV) $(PY) -m pip install -q torch==$(TORCH)
	$(PIPENV) $(PY) -m pip install -q -e '.[dev]'
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
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n 2 --dist loadfile -m "not full_models and not cuda"

test-models: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n 2 --dist load tests/models

# the CUDA tier (marker `cuda`): runs on a GPU, skips with one reason without one
test-cuda: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -p no:xdist -m cuda -rs tests/cuda

# the corpus against the installed torch: fails only on a bug of fxoracle's (torch's are findings)
corpus-diff: $(STAMP)
	$(VENV)/bin/fxoracle diff tests/corpus/*.py --against torch --fail-on reference \
		--json corpus-diff-$(TORCH).json

# every other torch users run: the suite and the corpus diff, each in its own venv
compat:
	@for v in $(COMPAT); do \
		$(MAKE) --no-print-directory test TORCH=$$v && \
		$(MAKE) --no-print-directory corpus-diff TORCH=$$v || exit 1; \
	done

fuzz: $(STAMP)
	$(VENV)/bin/fxoracle fuzz --minutes $(or $(MINUTES),60) --seed $(or $(SEED),0) \
		--out fuzz-findings.json --repro-dir fuzz-repros $(ARGS)

# region finding and keying vs torch, dedup and check_transformation at 2.4k/9.6k/38k nodes, then
# verify on a 48-layer decoder (capture against the rest)
bench: $(STAMP)
	$(VENV)/bin/fxoracle bench $(ARGS)
	HF_HUB_OFFLINE=1 $(VENV)/bin/fxoracle verify checker/examples/llama_48_layers.py

golden: $(STAMP)
	$(PY) -m tests.golden.regenerate

specs: $(STAMP)
	$(PY) -m tests.course.spec_examples

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
