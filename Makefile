# The two commands of the README: `make test` and (once it lands) `make demo`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check pfio tests benchmarks
	$(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(PY) -m ruff check pfio tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
