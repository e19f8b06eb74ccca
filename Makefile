# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

# PyTorch is pinned and installed first so the hf extra's range is already satisfied: on this
# workplace's machines pip finds the CPU build on local disk. Elsewhere, on a machine without a
# GPU, set TORCH_INDEX=https://download.pytorch.org/whl/cpu to avoid a multi-GB CUDA download.
TORCH ?= torch==2.13.0
TORCH_INDEX ?=

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet '$(TORCH)' $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -e '.[dev,api,hf,metrics,datasets,embed,synth,report,diffusion,holistic,ray,serve]'
	touch $(STAMP)

demo: $(STAMP)  ## generate a small synthetic benchmark, evaluate the built-in baselines on it
	$(VENV)/bin/lmmprobe synth generate --n 52 --size 256 --scenarios clean,corruption,print_attack \
		--out lmmprobe-runs/synth-demo --overwrite
	$(VENV)/bin/lmmprobe run --data synth:lmmprobe-runs/synth-demo --by subtask --by scenario

test: $(STAMP)  ## lint, type-check, check the layer contracts, run the fast offline test suite
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports  # import-linter: the layers of docs/architecture.md (pyproject)
	$(PY) -m pytest

bench: $(STAMP)  ## runner, API, ranking, synth, report, APEx, distributed, serve and arena benchmarks (each ends with name=value figures)
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/api_throughput.py
	$(PY) benchmarks/rank.py
	$(PY) benchmarks/synth.py
	$(PY) benchmarks/report.py
	$(PY) benchmarks/apex.py
	$(PY) benchmarks/distributed.py
	$(PY) benchmarks/serve_pages.py
	$(PY) benchmarks/arena_load.py

clean:
	rm -rf $(VENV) lmmprobe-runs .mypy_cache .ruff_cache .pytest_cache
