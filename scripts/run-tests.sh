#!/usr/bin/env bash
# The test suite, in two pytest calls: everything that mixes with `-n 2` first, then the
# tests of the engines that start a runtime of their own (Spark's JVM, a Ray cluster, the
# real Petastorm in its virtualenv), which run one at a time without xdist.
#
#   scripts/run-tests.sh PYTHON [PYTEST-ARG...]
set -euo pipefail
py=$1
shift
engines="spark or ray or petastorm"
"$py" -m pytest -n 2 -q -m "not ($engines)" "$@"
"$py" -m pytest -q -m "$engines" "$@"
