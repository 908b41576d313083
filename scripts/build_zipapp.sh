#!/usr/bin/env bash
# Build dist/cudnn-doctor.pyz: cudnn-doctor and its pure-Python dependencies in one file (the standard library's
# zipapp), for nodes that have a python3 (3.9 or newer) but no pip or venv. Copy it anywhere and run it:
#   python3 cudnn-doctor.pyz check --json
# The first run unpacks it once (scripts/zipapp_main.py says where and why); later runs start from that folder.
#
#   scripts/build_zipapp.sh [OUTPUT]        default dist/cudnn-doctor.pyz; PYTHON=python3.12 to build with another
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
out=${1:-dist/cudnn-doctor.pyz}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The project as a wheel first: the dependencies below are resolved as binaries only, and pip would refuse to
# build a source tree under --only-binary.
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheel" . >/dev/null
wheel=$(ls "$work"/wheel/cudnn_doctor-*.whl)

# The dependencies, pure-Python wheels only, resolved for the oldest Python the project supports (3.9), so the
# file runs on any python3 >= 3.9. Best resolved by a 3.9 interpreter ($RESOLVE_PYTHON, else python3.9 when it
# runs, else pyenv's): pip then honours each release's Requires-Python (typer 0.27 needs 3.10) and evaluates environment
# markers for 3.9. Without one, pip is told the target (--python-version 3.9), which checks Requires-Python only
# where the index publishes it, and evaluates markers for the building interpreter: so tomli (3.9/3.10's TOML
# parser; marker python_version < '3.11') is named explicitly. Newer interpreters never import it.
resolver=${RESOLVE_PYTHON:-python3.9}
if ! "$resolver" -V >/dev/null 2>&1; then  # pyenv's 3.9, where there is one
  for found in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9.*/bin/python3; do [ -x "$found" ] && resolver=$found; done
fi
target=(--platform any --implementation py --abi none)
if ! "$resolver" -c 'import sys; assert sys.version_info[:2] == (3, 9)' >/dev/null 2>&1; then
  resolver=$python
  target+=(--python-version 3.9)
fi
"$resolver" -m pip install --quiet --disable-pip-version-check --target "$work/site-packages" --only-binary=:all: \
  "${target[@]}" "$wheel" "tomli>=1.1" 2> >(grep -v "^WARNING: \(Location\|Running pip as\)" >&2)
rm -rf "$work/site-packages/bin"  # console scripts with the resolver's shebang; the zipapp has its own entry

# The oldest Python every packed release accepts (their Requires-Python), so that an older interpreter gets one
# clear line instead of an ImportError deep in a dependency.
min_python=$("$python" -I - "$work/site-packages" <<'PY'
import email, glob, sys
sys.path.insert(0, sys.argv[1])  # packaging is among the packed dependencies
from packaging.specifiers import SpecifierSet
specs = []
for meta in glob.glob(sys.argv[1] + "/*.dist-info/METADATA"):
    with open(meta, encoding="utf-8") as fh:
        spec = email.message_from_file(fh).get("Requires-Python")
    if spec:
        specs.append(SpecifierSet(spec))
print(next("3.%d" % m for m in range(9, 40) if all(s.contains("3.%d.0" % m) for s in specs)))
PY
)

# The entry point, stamped with a digest of everything packed beside it (the folder each build unpacks into).
build_id=$(cd "$work/site-packages" && find . -type f ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z \
  | xargs -0 sha256sum | sha256sum | cut -c1-16)
find "$work/site-packages" -name __pycache__ -prune -exec rm -rf {} +
mkdir "$work/app"
sed -e "s/@BUILD_ID@/$build_id/" -e "s/@MIN_PYTHON@/$min_python/" scripts/zipapp_main.py > "$work/app/__main__.py"
# Everything else goes in as one inner archive: Python reads a zipapp's whole directory at every start, and two
# entries are read faster than a thousand.
"$python" -I -c 'import shutil, sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2])' \
  "$work/app/payload" "$work/site-packages"

mkdir -p "$(dirname "$out")"
"$python" -m zipapp "$work/app" --output "$out.tmp" --python "/usr/bin/env python3"
mv -f "$out.tmp" "$out"
echo "built $out ($(du -h "$out" | cut -f1), build $build_id, for Python >= $min_python, dependencies resolved by $("$resolver" -V 2>&1))"
[ "$min_python" = 3.9 ] || echo "build_zipapp: this file needs Python >= $min_python; set RESOLVE_PYTHON to a Python 3.9 to build one for 3.9" >&2
echo "  $("$python" -I "$out" --version)"
