#!/usr/bin/env bash
# On the GPU machine (no network): install this checkout with the machine's own build tools, then run the
# installed command, the smoke test of every copy and tests/gpu against it.
set -u
export NO_COLOR=1 PYTHONUNBUFFERED=1
target=/tmp/cudnn-doctor-site
rm -rf "$target"
python3 -m pip install -q --no-deps --no-build-isolation --target "$target" . || exit 1
export PYTHONPATH=$target PATH=$target/bin:$PATH
echo "== $(cudnn-doctor --version) from $(python3 -c 'import cudnn_doctor; print(cudnn_doctor.__file__)')"
cudnn-doctor check; echo "exit=$?"
cudnn-doctor smoke --all; echo "exit=$?"
cudnn-doctor check --smoke --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("verdict", d["verdict"], [(f["id"], f["severity"]) for f in d["findings"]])'
python3 -m pytest -q -rs -p no:cacheprovider tests/gpu; echo "gpu tests exit=$?"
