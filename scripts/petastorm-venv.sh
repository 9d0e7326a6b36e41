#!/usr/bin/env bash
# Build .venv-petastorm at the repository root: the real Petastorm 0.13.1 (with pyspark,
# pyarrow 10 and NumPy 1, which cannot live beside pfio's own .venv) for the tests that
# compare pfio's Petastorm face with Petastorm itself (tests/integrations/petastorm/).
#
# The pins are benchmarks/harness.py's BASELINES["petastorm"] (one list for the bench and the
# tests) plus OpenCV for Petastorm's CompressedImageCodec. Idempotent: a stamp holding the
# pins skips the work when they have not changed. Usage: scripts/petastorm-venv.sh [python]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${1:-python3}"
venv="$root/.venv-petastorm"
stamp="$venv/.installed"

# OpenCV 4.10 is the last release built against NumPy 1's ABI
extra="opencv-python-headless==4.10.0.84"
pins="$("$python" - "$root/benchmarks" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from harness import BASELINES
print("\n".join(BASELINES["petastorm"]))
PY
)"
wanted="$(printf '%s\n%s\n' "$pins" "$extra")"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
    exit 0
fi
rm -f "$stamp"
"$python" -m venv "$venv"
# shellcheck disable=SC2086 - one pin a word
"$venv/bin/python" -m pip install --quiet $wanted
printf '%s' "$wanted" > "$stamp"
