#!/usr/bin/env bash
# The real-world corpus and generator: real framework and NVIDIA wheels from PyPI (cached in
# ~/.cache/cudnn-doctor-tests), the environment's own python under the real glibc loader as the oracle, each error's
# fix applied to a copy and proven for every framework of the environment. One line per case or draw:
#   case | oracle (what the loader mapped, or its dlerror) | what cudnn-doctor predicts | agree | fix proven?
#   scripts/realworld.sh [NAME...]                 the fixed corpus (tests/realworld_cases.py), by name fragment
#   scripts/realworld.sh --draws N --seed S        N environments drawn with seed S (a fresh seed when omitted)
#   scripts/realworld.sh --only K --seed S         only draw K of seed S (repeatable)
#   scripts/realworld.sh --regressions             every draw that ever failed (tests/realworld_regressions.txt)
#   python3 tests/realworld_pool.py                download and unpack the whole pool first (a cold cache)
# Exit 1 on any disagreement. REALWORLD_DOCTOR=/path/to/other/checkout judges that checkout's cudnn_doctor instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interpreter cudnn-doctor and its test extras are installed in (an active venv's python3), or $PYTHON: a bare
# system python3 without them would fail deep in the harness with "No module named typer".
py=${PYTHON:-python3}
"$py" -c "import typer, cudnn_doctor" 2>/dev/null || {
  echo "scripts/realworld.sh: $py cannot import cudnn_doctor; activate the environment it is installed in (pip install \".[test]\") or set PYTHON" >&2
  exit 2
}
exec "$py" tests/realworld_run.py "$@"
