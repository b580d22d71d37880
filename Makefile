# fxoracle: every target sets up its venv by itself on a fresh clone.
# TORCH picks the torch release: 2.13.0 (default: the CPU wheel cached on these machines, in
# .venv), or 2.11.0 / 2.12.0 / 2.14.1 / 2.15.0, each in its own venv under .venvs/ (CUDA builds
# that run on the CPU). fxoracle mirrors 2.11 to 2.15 (reference/torch_version.py).
TORCH   ?= 2.13.0
MIRRORS := 2.11 2.12 2.13 2.14 2.15
VENV    := $(if $(filter 2.13.0,$(TORCH)),.venv,.venvs/torch-$(TORCH))
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.fxoracle-installed
# pip on these machines caps torch at 2.14.1 (/etc/xdg/pip); a newer release lifts it per command
PIPENV  := $(if $(filter 2.15%,$(TORCH)),PIP_CONSTRAINT=/dev/null,)
GRAPH   ?=
ARGS    ?=
COMPAT  := 2.11.0 2.12.0 2.14.1 2.15.0

.PHONY: verify test test-models test-cuda lint typecheck pytest bench fuzz clean setup specs golden \
	compat corpus-diff size

# torch first (a bare `torch` pulls a CUDA build), then fxoracle under a constraint that pins it,
# so pip never swaps torch to satisfy a range; setup fails, saying why, unless torch is $(TORCH)
$(STAMP): pyproject.toml
	@test -n "$(filter $(basename $(TORCH)),$(MIRRORS))" || { echo "make setup: fxoracle \
	mirrors torch $(MIRRORS) (TORCH=2.11.0, 2.12.0, 2.13.0, 2.14.1 or 2.15.0), not $(TORCH)" >&2; \
	exit 2; }
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIPENV) $(PY) -m pip install -q torch==$(TORCH)
	@echo "torch==$(TORCH)" > $(VENV)/torch-pin.txt
	$(PIPENV) $(PY) -m pip install -q -c $(VENV)/torch-pin.txt -e '.[dev]'
	@got=$$($(PY) -m pip show torch | sed -n 's/^Version: //p'); case "$$got" in \
	$(TORCH)|$(TORCH)+*) echo "$(VENV): torch $$got";; *) echo "make setup: $(VENV) has \
	torch $$got, not $(TORCH) (pip show torch); nothing was stamped" >&2; exit 1;; esac
	@touch $(STAMP)

setup: $(STAMP)

verify: $(STAMP)
	$(VENV)/bin/fxoracle verify $(GRAPH) $(ARGS)

test: lint typecheck pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check reference checker tests
	$(VENV)/bin/ruff format --check reference checker tests

# mypy --strict holds against 2.13's stubs and later; torch 2.11 and 2.12 leave Graph.lint,
# ShapeProp.propagate, CodeGen and split_module untyped and lack split_module_simple and
# tuple_return (both guarded at run time, reference/torch_version.py): those codes are off there
MYPYOFF := $(if $(filter 2.11.% 2.12.%,$(TORCH)),$(foreach c,no-untyped-call no-any-return \
	attr-defined call-arg,--disable-error-code $(c)),)
typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict $(MYPYOFF)

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

# region finding and keying vs torch, dedup and check_transformation at 2.4k/9.6k/38k nodes, a
# campaign on 1 and 2 workers, each of the nine planted bugs' time to detect (and model count) on
# random models of seeds 0, 1 and 2 (DIF-29), then verify on a 48-layer decoder (capture against
# the rest)
bench: $(STAMP)
	$(VENV)/bin/fxoracle bench $(ARGS)
	HF_HUB_OFFLINE=1 $(VENV)/bin/fxoracle verify checker/examples/llama_48_layers.py

# the reference's size against torch's (issue 33, CHK-21): reach, code lines per concept
size: $(STAMP)
	$(VENV)/bin/fxoracle bench --size $(ARGS)

golden: $(STAMP)
	$(PY) -m tests.golden.regenerate

specs: $(STAMP)
	$(PY) -m tests.course.spec_examples

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
