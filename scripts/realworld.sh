#!/usr/bin/env bash
# The real-world corpus in full: real framework and cuDNN wheels from PyPI (cached in ~/.cache/cudnn-doctor-tests),
# the real glibc loader as the oracle, each printed fix applied to a copy and proven. One line per case:
#   case | oracle (what the loader mapped, or its dlerror) | what cudnn-doctor predicts | agree | fix proven?
# Arguments pick cases by name fragment (scripts/realworld.sh torch tf215). Exit 1 on any disagreement.
# REALWORLD_DOCTOR=/path/to/other/checkout judges that checkout's cudnn_doctor instead (e.g. `git archive main`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/realworld_run.py "$@"
