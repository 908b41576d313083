"""The block fix writes into a venv's bin/activate runs in a strict script too (`set -euo pipefail`, as CI jobs and
many users' scripts source activate) with LD_LIBRARY_PATH unset: a new user's trial found 'LD_LIBRARY_PATH: unbound
variable' where the plain venv's own activate ran silently."""
from __future__ import annotations

import subprocess
import sys

from cudnn_doctor.fixing.activate import venv_activate
from cudnn_doctor.model import Facts
from cudnn_doctor.remedies.shell import ld_library_path_without


def test_the_drop_line_runs_under_set_u_with_the_variable_unset_and_set(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    activate = venv / "bin" / "activate"
    [line] = ld_library_path_without(Facts(), ["/opt/old/lib"]).commands
    written = venv_activate(activate.read_text(), [line])
    assert written is not None
    activate.write_text(written)
    script = 'set -euo pipefail; . "%s"; echo "after=${LD_LIBRARY_PATH-unset}"; deactivate; ' \
             'echo "back=${LD_LIBRARY_PATH-unset}"' % activate
    for before, after, back in ((None, "", "unset"), ("/opt/old/lib:/keep", "/keep", "/opt/old/lib:/keep")):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        if before is not None:
            env["LD_LIBRARY_PATH"] = before
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
        assert done.returncode == 0 and not done.stderr, done.stderr
        assert done.stdout.split() == ["after=" + after, "back=" + back], done.stdout
