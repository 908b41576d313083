"""The one seam to the machine: its files under a root (host/files.py), the environment, and native calls in a child
process. Raw access only: what a file, a device or a program says is interpreted by the probes (container, WSL and
the kernel log in probes/hostinfo.py and probes/node.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..native.driver import NativeTask
from ..native.runner import CHILD_SCRIPT, run_native
from ..native.session import NativeSession
# The native tasks the probes and the command line's early child ask for (and the GPUs' UUIDs the readiness task
# names), reached through the seam.
from ..native.tasks import early_tasks, gpu_uuid, health_task, ready_task
from .files import LIVE_ROOT, RootFiles
from .start import start_form

__all__ = ["Host", "NativeSession", "NativeTask", "early_tasks", "gpu_uuid", "health_task", "ready_task", "start_form"]


class Host(RootFiles):
    """Everything a probe may know about the machine comes through here: files (inside paths under ``root``, see
    RootFiles), the environment, devices and programs of the live machine, and the native child."""

    def __init__(
        self,
        root: str = "/",
        env: Optional[Mapping[str, str]] = None,
        *,
        native_timeout: float = 10.0,
        running_python: Optional[bool] = None,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.env: Dict[str, str] = dict(os.environ if env is None else env)
        self.native_timeout = native_timeout
        is_live = str(self.root) == LIVE_ROOT
        # Reading the running interpreter's sys.path only makes sense for the live machine, not for an image mounted
        # under --root.
        self.running_python = is_live if running_python is None else running_python
        self.not_regular = []
        self._realpaths = None
        self._listings = None

    # --- devices and programs of the live machine ------------------------

    def read_records(self, inside: str, limit: int = 8 << 20) -> Optional[bytes]:
        """What a device that hands one record per read and never ends (/dev/kmsg) holds now, read without
        blocking, up to ``limit`` bytes; None when it cannot be opened, and always under --root: a tree's devices
        are not the running machine's (and a regular file there is read with read_text)."""
        if not self.is_live:
            return None
        try:
            fd = os.open(inside, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        records: List[bytes] = []
        size = 0
        try:
            while size < limit:
                try:
                    record = os.read(fd, 8192)  # one record per read
                except BlockingIOError:  # the end of what the device holds now
                    break
                except BrokenPipeError:  # a record was overwritten while reading: the next one follows
                    continue
                except OSError:
                    break
                if not record:
                    break
                records.append(record)
                size += len(record)
        finally:
            os.close(fd)
        return b"".join(records)

    def run_program(self, name: str, args: Sequence[str], timeout: float) -> Optional[Tuple[int, bytes]]:
        """(exit status, standard output) of the program ``name`` found on this host's PATH, run with ``args`` in
        this host's environment (LC_ALL=C: the words probes parse), stdin closed and stderr dropped. None when it is
        not found, cannot start or overruns ``timeout``, and always under --root: a tree's programs are not run."""
        program = shutil.which(name, path=self.getenv("PATH") or os.defpath) if self.is_live else None
        if not program:
            return None
        try:
            done = subprocess.run([program, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, timeout=timeout, env=dict(self.env, LC_ALL="C"))
        except (OSError, subprocess.SubprocessError):
            return None
        return done.returncode, done.stdout

    # --- environment ---------------------------------------------------

    def euid(self) -> Optional[int]:
        """The effective user id of this run on a live machine (None under --root, where the fixes are for the
        root's owner, and on systems without uids)."""
        return os.geteuid() if self.is_live and hasattr(os, "geteuid") else None

    @staticmethod
    def started_by_sudo() -> bool:
        """Whether sudo started this run for a user who is not root (SUDO_UID): back in their own shell, where they
        type the fixes, a root-owned file needs sudo again though this run's effective user is root."""
        return os.environ.get("SUDO_UID", "0") not in ("", "0")

    @staticmethod
    def doctor_start() -> Tuple[Tuple[str, ...], bool]:
        """How this cudnn-doctor is started again from any shell, sudo's included (its absolute words), and whether
        a plain `cudnn-doctor` on PATH starts the same program (tests replace this with a fixed form)."""
        return start_form(sys.argv[0], sys.executable, os.environ.get("PATH", ""))

    def getenv(self, name: str) -> Optional[str]:
        return self.env.get(name)

    def env_paths(self, name: str) -> List[str]:
        """A colon-separated path variable, in order, empty entries dropped."""
        value = self.env.get(name) or ""
        return [p for p in value.split(os.pathsep) if p]

    def python_site_dirs(self) -> List[str]:
        """The running interpreter's site folders, when inspecting the live machine."""
        if not self.running_python:
            return []
        return [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]

    # --- running things ------------------------------------------------

    def native_session(self, early: Optional[NativeSession] = None) -> NativeSession:
        """One child for all of a run's native calls, fed as probes find libraries (native/session.py).

        ``early``: a session the command line started before its own imports (cli.main); taken when it was made
        for this host's environment and task limit, else closed and a fresh one made."""
        task_timeout = max(1.0, self.native_timeout / 2)
        if early is not None:
            if early.base_env == self.env and early.task_timeout == task_timeout:
                return early
            early.close()
        return NativeSession(env=self.env, task_timeout=task_timeout)

    def run_native(self, groups: List[Sequence[NativeTask]], timeout: Optional[float] = None,
                   task_timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                   script: Optional[str] = None) -> List[List[dict]]:
        """Each group of native tasks in a child of its own, all within ``timeout`` (native/runner.py), one result
        per task; with this host's environment unless ``env`` is given. ``script`` is another child program that
        speaks the same line protocol (smoke's and bench's children)."""
        return run_native(groups, timeout=self.native_timeout if timeout is None else timeout,
                          task_timeout=task_timeout, env=self.env if env is None else env,
                          script=script or CHILD_SCRIPT)
