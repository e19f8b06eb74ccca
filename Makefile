# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,api]'
	touch $(STAMP)

demo: $(STAMP)  ## run the baselines on the built-in demo data and print the results table
	$(VENV)/bin/lmmprobe run

test: $(STAMP)  ## lint, type-check and run the fast offline test suite
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest

bench: $(STAMP)  ## runner overhead benchmark (prints name=value figures)
	$(PY) benchmarks/overhead.py

clean:
	rm -rf $(VENV) lmmprobe-runs .mypy_cache .ruff_cache .pytest_cache
