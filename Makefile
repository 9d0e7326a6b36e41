# The two commands of the README: `make test` and (once it lands) `make demo`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint bench demo clean

$(STAMP): pyproject.toml setup.py pfio-patches.pth
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	rm -rf pfio.egg-info  # a stale one would shadow the installed entry points
	$(PY) -m pip install -e '.[test]'
	# Chainer 7.8.1 is source-only and its setup imports pkg_resources (setuptools < 81)
	$(PY) -m pip install 'setuptools<81'
	$(PY) -m pip install --no-build-isolation 'chainer==7.8.1'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check pfio tests benchmarks
	scripts/with-ceph.sh $(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(PY) -m ruff check pfio tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info

demo: $(STAMP)
	$(PY) -m pfio demo
