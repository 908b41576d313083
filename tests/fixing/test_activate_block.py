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


def test_an_rc_file_gets_one_block_at_its_end_that_a_second_fix_extends_and_the_users_lines_stay():
    from cudnn_doctor.fixing.activate import rc_text, without_blocks
    user = "alias ll='ls -l'\nexport LD_LIBRARY_PATH=/opt/cudnn8/lib"  # no newline at its end
    once = rc_text(user, ["unset LD_PRELOAD"])
    twice = rc_text(once, ["export LD_LIBRARY_PATH=/x${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}", "unset LD_PRELOAD"])
    assert once.startswith(user + "\n# >>> cudnn-doctor >>>\n") and once.endswith("unset LD_PRELOAD\n# <<< cudnn-doctor <<<\n")
    assert twice.count("# >>> cudnn-doctor >>>") == 1 and twice.count("unset LD_PRELOAD") == 1
    assert twice.index("export LD_LIBRARY_PATH=/x") < twice.index("unset LD_PRELOAD")  # the newest fix's order
    assert without_blocks(twice) == user + "\n"
    # what bash makes of it: the user's setting first, the block after it
    import subprocess
    out = subprocess.run(["bash", "-c", twice + "\necho \"$LD_LIBRARY_PATH\""], capture_output=True, text=True)
    assert out.stdout.strip() == "/x:/opt/cudnn8/lib"
