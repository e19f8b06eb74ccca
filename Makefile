# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help demo test test-slow bench lock clean

# `make` alone lists the targets: before, it only built the environment (a fresh clone) or
# said "'.venv/.installed' is up to date", which told a new user nothing.
.DEFAULT_GOAL := help
help:  ## list these targets (make alone)
	@echo "make TARGET (each target first creates .venv with what it needs; see README.md):"
	@sed -n -E 's/^([a-z-]+):[^#]*## (.*)/  make \1\t\2/p' $(firstword $(MAKEFILE_LIST))

# Installs are reproducible: every package, transitive ones included, is pinned by LOCK (pip
# constraints), so a fresh clone resolves the versions `make test` passed with, whatever was
# released since. `make lock` re-resolves at the newest versions pyproject.toml allows.
# PyTorch is installed first so the hf extra's range is already satisfied: on this workplace's
# machines pip finds the CPU build on local disk. Elsewhere, on a machine without a GPU, set
# TORCH_INDEX=https://download.pytorch.org/whl/cpu to avoid a multi-GB CUDA download.
LOCK := requirements.lock
EXTRAS := dev,api,hf,metrics,datasets,predictions,embed,synth,report,diffusion,holistic,ray,serve,ocr,mathvision,video,ocrbench
TORCH ?= torch==2.13.0
TORCH_INDEX ?=

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c $(LOCK) --upgrade pip
	$(PY) -m pip install --quiet -c $(LOCK) '$(TORCH)' $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -c $(LOCK) -e '.[$(EXTRAS)]'
	touch $(STAMP)

lock:  ## re-resolve every dependency at the newest allowed versions into requirements.lock
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet '$(TORCH)' $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	.venv-lock/bin/python -m pip install --quiet -e '.[$(EXTRAS)]'
	{ sed -n '1,3p' $(LOCK); .venv-lock/bin/python -m pip freeze --all --exclude-editable \
		| sed -E 's/\+[A-Za-z0-9.]+$$//' | LC_ALL=C sort -f; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .venv-lock
	@echo "requirements.lock refreshed: run 'make test' (it reinstalls .venv from the lock) before committing"

demo: $(STAMP)  ## generate a small synthetic benchmark, evaluate the built-in baselines on it
	$(VENV)/bin/lmmprobe synth generate --n 52 --size 256 --scenarios clean,corruption,print_attack \
		--out lmmprobe-runs/synth-demo --overwrite
	$(VENV)/bin/lmmprobe run --data synth:lmmprobe-runs/synth-demo --by subtask --by scenario

test: $(STAMP)  ## lint, type-check, check the layer contracts, run the fast offline test suite
	@echo "make test: ruff, mypy, the import contracts, then the fast offline suite;"
	@echo "about 10 minutes on a quiet 2-core machine once installed (a fresh clone on 2026-12-02: 8 min 57 s of tests, 5,338 tests, after 3 minutes of install and 1 of checks), several times that on a loaded one."
	@echo "The slowest tests (tests/slow_tests.txt, by measured CPU) are left out: make test-slow, or pytest -m slow"
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports  # import-linter: the layers of docs/architecture.md (pyproject)
	$(PY) -m pytest

test-slow: $(STAMP)  ## the tests `make test` leaves out as slow (pytest -m slow): 1,364 tests on 2026-12-02 (664 of them took 19 minutes at load 2-3 on 2026-12-01)
	$(PY) -m pytest -m slow

bench: $(STAMP)  ## runner, API, ranking, synth, report, APEx, distributed, serve, arena and GPU benchmarks (each ends with name=value figures)
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/api_throughput.py
	$(PY) benchmarks/rank.py
	$(PY) benchmarks/chat_template_render.py
	$(PY) benchmarks/synth.py
	$(PY) benchmarks/synth_video.py
	$(PY) benchmarks/report.py
	$(PY) benchmarks/report_frames.py
	$(PY) benchmarks/apex.py
	$(PY) benchmarks/distributed.py
	$(PY) benchmarks/serve_pages.py
	$(PY) benchmarks/arena_load.py
	$(PY) benchmarks/answer_cache.py
	$(PY) benchmarks/vs_lmms_eval.py  # skipped unless lmms-eval is in its scratch venv
	$(PY) benchmarks/hf_gpu.py  # skipped without a CUDA device

clean:
	rm -rf $(VENV) lmmprobe-runs .mypy_cache .ruff_cache .pytest_cache
