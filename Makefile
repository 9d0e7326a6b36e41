# The two commands of the README: `make test` and `make demo`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint bench demo clean

$(STAMP): pyproject.toml setup.py pfio-patches.pth scripts/petastorm-venv.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	rm -rf pfio.egg-info  # a stale one would shadow the installed entry points
	$(PY) -m pip install -e '.[test]'
	# Chainer 7.8.1 is source-only and its setup imports pkg_resources (setuptools < 81)
	$(PY) -m pip install 'setuptools<81'
	$(PY) -m pip install --no-build-isolation 'chainer==7.8.1'
	# pfio's TensorFlow filesystem plugin, compiled ahead for the installed TensorFlow
	if $(PY) -c 'import tensorflow' 2>/dev/null; then \
		$(PY) -m pfio.integrations.tensorflow.plugin.build; fi
	# Spark's JVM (Java 17 from Debian where it is missing), and the real Petastorm, which
	# needs pyarrow 10 and NumPy 1, in a virtualenv of its own for the tests that compare
	scripts/ensure-java.sh
	scripts/petastorm-venv.sh $(PYTHON)
	touch $(STAMP)

# the tracer's C extension, which the editable install builds in place (pfio/trace/): built
# again when its source changes
NATIVE_STAMP := $(VENV)/.native
$(NATIVE_STAMP): $(wildcard pfio/trace/_native_src/*.c pfio/trace/_native_src/*.h) $(STAMP)
	$(PY) setup.py -q build_ext --inplace
	touch $(NATIVE_STAMP)

test: $(STAMP) $(NATIVE_STAMP)
	$(PY) -m ruff check pfio tests benchmarks
	$(PY) -m mypy pfio
	scripts/with-ceph.sh scripts/run-tests.sh $(PY)

lint: $(STAMP)
	$(PY) -m ruff check pfio tests benchmarks
	$(PY) -m mypy pfio

bench: $(STAMP) $(NATIVE_STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) $(DEMO_VENV) build *.egg-info pfio/trace/_native*.so

# the demo gets a virtualenv of its own with the `demo` extra only (no test tools, no Chainer)
DEMO_VENV := .venv-demo
DEMO_STAMP := $(DEMO_VENV)/.installed

$(DEMO_STAMP): pyproject.toml setup.py pfio-patches.pth
	$(PYTHON) -m venv $(DEMO_VENV)
	rm -rf pfio.egg-info  # a stale one would shadow the installed entry points
	$(DEMO_VENV)/bin/python -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(DEMO_VENV)/bin/python -m pfio demo
