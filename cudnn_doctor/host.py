"""The one seam to the machine: a filesystem root, the environment, and native calls in a child process."""
from __future__ import annotations

import copy
import fnmatch
import os
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import bounded_io
from .native.driver import NativeTask
# The native tasks the probes and the command line's early child ask for, reached through the seam.
from .native.tasks import early_tasks, gpu_uuid, health_task, ready_task

__all__ = ["Host", "NativeTask", "early_tasks", "health_task", "ready_task"]

if TYPE_CHECKING:
    from .native.session import NativeSession

_MAX_LINKS = 40  # like the kernel's ELOOP bound
_LIVE_ROOT = os.path.abspath(os.sep)  # "/" on POSIX, the current drive's root (C:\\) on Windows
LINK_LOOP = "(link loop)"  # ends a link chain that comes back on itself


def start_form(argv0: str, executable: str, path: str) -> Tuple[Tuple[str, ...], bool]:
    """The absolute words that start the program Python was started with (``sys.argv[0]``): the console script
    itself, ``python -I APP.pyz`` for a zipapp, ``python -m cudnn_doctor`` for the package run as a module; and
    whether ``cudnn-doctor`` on ``path`` is that same console script."""
    python = os.path.abspath(executable) if executable else "python3"  # a venv's python is found by its own path
    script = os.path.abspath(argv0) if argv0 and argv0 != "-c" else ""
    if script and os.path.isfile(script) and _may_be_zip(script):
        import zipfile  # here, not at the top: `check` starts by importing this module

        if zipfile.is_zipfile(script):
            return (python, "-I", script), False
    # Anything but the console script (``-m``'s __main__.py, a program that imports the package) runs it as a module.
    if not (os.path.isfile(script) and os.path.basename(script).startswith("cudnn-doctor")):
        return (python, "-m", "cudnn_doctor"), False
    import shutil

    found = shutil.which("cudnn-doctor", path=path)
    return (script,), found is not None and os.path.realpath(found) == os.path.realpath(script)


def _may_be_zip(path: str) -> bool:
    """False when the file holds no zip end record where zipfile.is_zipfile looks for one (its last 64 KiB and 22
    bytes): a console script or __main__.py is then told from a zipapp without importing zipfile."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - (1 << 16) - 22))
            return b"PK\x05\x06" in fh.read()
    except OSError:
        return True  # let zipfile decide, as before


def _this_machine() -> str:
    """platform.machine(), which is os.uname()'s on POSIX: without importing platform (2 ms at every start)."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


def _normalize_machine(name: str) -> str:
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name.lower(), name.lower())


class Host:
    """Everything a probe may know about the machine comes through here.

    Paths handed in and out are *inside* paths: as a program running under ``root``
    would see them ("/usr/local/cuda"). Symbolic links are resolved inside the root,
    so an absolute link in a container image never escapes into the doctor's own machine.
    """

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
        is_live = str(self.root) == _LIVE_ROOT
        # Reading the running interpreter's sys.path only makes sense for the live machine, not for an image mounted
        # under --root.
        self.running_python = is_live if running_python is None else running_python
        self._machine: Optional[str] = None
        # Paths that were not regular files where files were expected, for CD003: a run's own (``for_run``).
        self.not_regular: List[Tuple[str, str, str, str]] = []  # (probe, given path, kind, resolved path)
        # realpath and listdir answers while a snapshot is open (see ``snapshot``); None when closed: every call asks.
        self._realpaths: Optional[Dict[str, Tuple[str, bool]]] = None
        self._listings: Optional[Dict[str, List[str]]] = None

    # --- paths ---------------------------------------------------------

    @property
    def is_live(self) -> bool:
        return str(self.root) == _LIVE_ROOT

    def outside(self, inside: str) -> Path:
        """The doctor's own path for an inside path, without resolving links."""
        return Path(self._outside(inside))

    def _outside(self, inside: str) -> str:
        """outside() as the string the os functions take: a run asks hundreds of times, and building a Path
        costs more than the stat it feeds. Every read goes through it: a Host that maps paths its own way (the
        realworld harness's CaseHost) replaces this, not outside()."""
        inside = "/" + inside.lstrip("/")
        root = str(self.root)
        return inside if root == _LIVE_ROOT else root if inside == "/" else root + inside  # as Path writes it

    def inside(self, outside: Union[str, "os.PathLike[str]"]) -> str:
        """Map a doctor-side path back to how it appears under the root."""
        text = os.fspath(outside)
        if self.is_live:
            return text
        root = str(self.root)
        if text == root:
            return "/"
        if text.startswith(root + "/"):
            return text[len(root):]
        return text

    def _readlink_direct(self, inside: str) -> Optional[str]:
        """readlink of a path whose folders are already resolved (else the OS would follow them outside)."""
        try:
            return os.readlink(self._outside(inside))
        except OSError:
            return None

    def readlink(self, inside: str) -> Optional[str]:
        return self._readlink_direct(self._in_real_parent(inside))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within the block, each path's links are resolved once and each folder listed once: one `check` asks for
        the same folders hundreds of times (every library search walks /usr/lib, /usr/local/cuda/lib64, ...; the
        cuDNN, toolkit and leftover probes each list /usr/lib/x86_64-linux-gnu, thousands of names), and a run is a
        snapshot of the machine anyway. Probes never write, so nothing inside the block can make an answer
        stale; the memo is dropped when the block ends, so a Host that outlives it (an installer that
        changes files and then looks again) resolves afresh."""
        outer = self._realpaths
        if outer is None:
            self._realpaths, self._listings = {}, {}
        try:
            yield
        finally:
            if outer is None:
                self._realpaths, self._listings = None, None

    def realpath(self, inside: str) -> Tuple[str, bool]:
        """Resolve every link in ``inside`` within the root. Returns (path, dangling)."""
        bounded_io.note(inside)
        return self._remembered(inside)

    def _remembered(self, inside: str) -> Tuple[str, bool]:
        memo = self._realpaths
        if memo is None:
            return self._resolve(inside)
        found = memo.get(inside)
        if found is None:
            found = memo[inside] = self._resolve(inside)
        return found

    def _resolve(self, inside: str) -> Tuple[str, bool]:
        if self.is_live:
            real = self._live_realpath(inside)
            return real, not os.path.exists(real)
        parts = [p for p in inside.split("/") if p]
        resolved: List[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join(resolved + [part])
            target = self._readlink_direct(candidate)
            if target is None:
                resolved.append(part)
                continue
            hops += 1
            if hops > _MAX_LINKS:
                return candidate, True
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
        path = "/" + "/".join(resolved)
        return path, not os.path.lexists(self._outside(path))

    def _live_realpath(self, inside: str) -> str:
        """os.path.realpath(inside); in a snapshot, from its folder's remembered answer and one lstat of the last
        name (a run resolves hundreds of paths under the same few folders, each walked from / by realpath)."""
        folder, name = os.path.split(inside)
        if self._realpaths is None or name in ("", ".", "..") or not folder or folder == inside:
            return os.path.realpath(inside)
        path = os.path.join(self._remembered(folder)[0], name)
        return os.path.realpath(path) if os.path.islink(path) else path

    def link_chain(self, inside: str) -> Tuple[List[str], bool]:
        """The chain of links from ``inside`` to the final file (``ln -s`` hops only)."""
        chain = [inside]
        current = inside
        for _ in range(_MAX_LINKS):
            target = self.readlink(current)
            if target is None:
                break
            nxt = target if target.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(current), target))
            if nxt in chain:
                chain.append(LINK_LOOP)  # the kernel's ELOOP: the chain never reaches a file
                break
            chain.append(nxt)
            current = nxt
        real, dangling = self.realpath(inside)
        return chain, dangling

    def real(self, inside: str) -> Path:
        """The doctor-side path of the file an inside path finally names."""
        return Path(self._real(inside))

    def _real(self, inside: str) -> str:
        path, _ = self.realpath(inside)
        return self._outside(path)

    def exists(self, inside: str) -> bool:
        return os.path.exists(self._real(inside))

    def lexists(self, inside: str) -> bool:
        return os.path.lexists(self._outside(self._in_real_parent(inside)))

    def _in_real_parent(self, inside: str) -> str:
        """``inside`` with its folders resolved and its last name kept (a link stays a link)."""
        parent, _ = self.realpath(os.path.dirname(inside) or "/")
        name = os.path.basename(inside)
        return os.path.join(parent, name) if name else parent

    def is_dir(self, inside: str) -> bool:
        return os.path.isdir(self._real(inside))

    def is_file(self, inside: str) -> bool:
        return os.path.isfile(self._real(inside))

    def is_link(self, inside: str) -> bool:
        return os.path.islink(self._outside(self._in_real_parent(inside)))

    def stat(self, inside: str) -> Optional[os.stat_result]:
        """stat() of the file an inside path finally names (links followed inside the root)."""
        bounded_io.note(inside)
        try:
            return os.lstat(self._real(inside))
        except OSError:
            return None

    def listdir(self, inside: str) -> List[str]:
        bounded_io.note(inside)
        real = self._real(inside)
        memo = self._listings
        names = memo.get(real) if memo is not None else None
        if names is None:
            try:
                names = sorted(os.listdir(real))
            except OSError:
                names = []
            if memo is not None:
                memo[real] = names
        return list(names)  # the caller's own list: the memo's stays as the folder was

    def read_bytes(self, inside: str, limit: int = 1 << 20) -> Optional[bytes]:
        opened = self.open_binary(inside)
        if opened is None:
            return None
        with opened[0] as fh:
            try:
                return fh.read(limit)
            except OSError:
                return None

    def open_binary(self, inside: str) -> Optional[Tuple[BinaryIO, int]]:
        """An open regular file and its size, for readers that seek (ELF, ld.so.cache); caller closes it.

        A FIFO, socket or device is never read (it may block or never end): it is noted for CD003.
        """
        real, _ = self.realpath(inside)
        bounded_io.note(real)
        try:
            fh = bounded_io.open_regular(self._outside(real))
        except bounded_io.NotRegularFile as exc:
            self.note_not_regular(inside, real, exc.kind)
            return None
        except OSError:
            return None
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            fh.close()
            return None
        return fh, size

    def for_run(self) -> "Host":
        """This machine as one observation run sees it: the same host, with a list of its own for what the run
        meets where files belong, so that nothing of a run stays in the Host its caller passed."""
        run = copy.copy(self)
        run.not_regular = []
        return run

    def note_not_regular(self, inside: str, real: str, kind: str, probe: Optional[str] = None) -> None:
        """Note a FIFO, socket, device or folder met where a file belongs, for CD003: by the path the probe was
        given, then what it resolved to; once per resolved file (two links to one FIFO are one finding)."""
        if not any(s[2:] == (kind, real) for s in self.not_regular):
            self.not_regular.append((probe or bounded_io.current_probe(), inside, kind, real))

    def regular_file_kind(self, inside: str) -> Optional[str]:
        """None when ``inside`` finally names a regular file (or nothing); else what it is ("named pipe (FIFO)",
        "folder", ...). Only stat()s: a FIFO is never opened."""
        st = self.stat(inside)
        if st is None or stat.S_ISREG(st.st_mode):
            return None
        return bounded_io.kind_of(st.st_mode)

    def read_text(self, inside: str, limit: int = 1 << 20) -> Optional[str]:
        data = self.read_bytes(inside, limit)
        return None if data is None else data.decode("utf-8", "replace")

    def read_blocker(self, inside: str) -> Optional[str]:
        """The first path that stops 'other' from reading ``inside``: the file without o+r, or a folder
        above it without o+x. None when everyone can read it (or it cannot be examined).

        Mode bits, not access(): as root, access() says yes to everything, which hides the D5
        failure from the people who hit it.
        """
        path, dangling = self.realpath(inside)
        if dangling:
            return None
        parents = []
        parent = os.path.dirname(path)
        while parent and parent != "/":
            parents.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(parents):  # outermost first: that is the one to fix first
            try:
                if not os.stat(self._outside(folder)).st_mode & stat.S_IXOTH:
                    return folder
            except OSError:
                return None
        try:
            return None if os.stat(self._outside(path)).st_mode & stat.S_IROTH else path
        except OSError:
            return None

    def world_readable(self, inside: str) -> Optional[bool]:
        """True when 'other' may read the file and search every folder above it (None: cannot tell)."""
        path, dangling = self.realpath(inside)
        if dangling or not os.path.exists(self._outside(path)):
            return None
        return self.read_blocker(inside) is None

    def glob(self, pattern: str) -> List[str]:
        """Expand shell wildcards component by component, inside the root."""
        parts = [p for p in pattern.split("/") if p]
        found = ["/"]
        for part in parts:
            nxt: List[str] = []
            for base in found:
                if any(ch in part for ch in "*?["):
                    for name in self.listdir(base):
                        if fnmatch.fnmatchcase(name, part):
                            nxt.append(os.path.join(base, name))
                else:
                    cand = os.path.join(base, part)
                    if self.lexists(cand):
                        nxt.append(cand)
            found = nxt
            if not found:
                break
        return sorted(found)

    def listed_gpus(self) -> List[Tuple[str, Optional[str]]]:
        """The GPUs the NVIDIA driver lists in /proc/driver/nvidia/gpus, in PCI bus order: (bus id, UUID or None
        while the driver does not know it)."""
        listed = sorted(os.path.basename(path).lower() for path in self.glob("/proc/driver/nvidia/gpus/*"))
        return [(address, gpu_uuid(self.read_text("/proc/driver/nvidia/gpus/%s/information" % address, 4096) or ""))
                for address in listed]

    def read_kernel_log(self, limit: int = 8 << 20) -> Optional[str]:
        """The kernel's messages since boot, one record a line, from /dev/kmsg (read without blocking: it is a
        device that never ends). Under --root a regular file /dev/kmsg holds them (fake roots); None when the log
        cannot be read (dmesg_restrict for a user, a container without it)."""
        if not self.is_live:
            return self.read_text("/dev/kmsg", limit) if self.regular_file_kind("/dev/kmsg") is None else None
        try:
            fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        records: List[bytes] = []
        size = 0
        try:
            while size < limit:
                try:
                    record = os.read(fd, 8192)  # one record per read
                except BlockingIOError:  # the end of what the kernel holds now
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
        return b"".join(records).decode("utf-8", "replace")

    def read_kernel_journal(self, timeout: float = 3.0, limit: int = 8 << 20) -> Optional[str]:
        """The kernel's messages since this boot from the systemd journal (journalctl -k -b), for a user who may read
        the journal (groups adm, systemd-journal) where /dev/kmsg is closed (kernel.dmesg_restrict=1). None when
        journalctl is missing, fails, overruns ``timeout`` or shows no kernel message (no right to see them), and
        always under --root: a tree has no running kernel."""
        import shutil

        program = shutil.which("journalctl", path=self.getenv("PATH") or os.defpath) if self.is_live else None
        if not program:
            return None
        try:
            done = subprocess.run([program, "-k", "-b", "-q", "--no-pager", "-o", "short-monotonic"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  timeout=timeout, env=dict(self.env, LC_ALL="C"))
        except (OSError, subprocess.SubprocessError):
            return None
        text = done.stdout[:limit].decode("utf-8", "replace")
        shown = [line for line in text.splitlines() if line.strip() and not line.startswith("--")]
        return text if done.returncode == 0 and shown else None

    def machine(self) -> str:
        """The CPU architecture programs under the root are built for: 'x86_64', 'aarch64', ...

        Live: this machine's. Under --root: the ELF machine of the root's own shell or loader, so an arm64
        image inspected from an x86_64 host is judged as arm64.
        """
        if self._machine is None:
            self._machine = _normalize_machine(_this_machine()) if self.is_live else "x86_64"
            if not self.is_live:
                # Here, not at the top: cli.main imports this module to start the native child, before anything else.
                from .readers.elf import read_elf

                for probe in ("/bin/sh", "/usr/bin/env", "/bin/ls"):
                    opened = self.open_binary(probe)
                    if opened is None:
                        continue
                    fh, size = opened
                    try:
                        info = read_elf(fh, size, expect_machine="", dynamic=False)
                    except Exception:
                        continue
                    finally:
                        fh.close()
                    if info.machine:
                        self._machine = info.machine
                        break
        return self._machine

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

    def in_container(self) -> bool:
        """Whether this machine is a container (Docker, Podman, Kubernetes, containerd): its GPU comes from the
        host through the container runtime, never from a driver installed inside."""
        cgroup = self.read_text("/proc/1/cgroup", limit=65536) or ""
        return bool(self.lexists("/.dockerenv") or self.lexists("/run/.containerenv") or self.getenv("container")
                    or any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod")))

    def in_wsl(self, kernel_release: Optional[str] = None) -> bool:
        """Whether this is WSL2, whose GPU driver is the Windows one (/dev/dxg, /usr/lib/wsl/lib)."""
        release = (kernel_release if kernel_release is not None else self.read_text("/proc/sys/kernel/osrelease")
                   or "").lower()
        return "microsoft" in release or "wsl" in release or self.lexists("/dev/dxg")

    def driver_place(self) -> str:
        """Where this machine's NVIDIA driver has to come from: 'container', 'wsl' or 'host'."""
        return "container" if self.in_container() else "wsl" if self.in_wsl() else "host"

    # --- running things ------------------------------------------------

    def native_session(self, early: Optional[NativeSession] = None) -> NativeSession:
        """One child for all of a run's native calls, fed as probes find libraries (native/session.py).

        ``early``: a session the command line started before its own imports (cli.main); taken when it was made
        for this host's environment and task limit, else closed and a fresh one made."""
        from .native.session import NativeSession

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
        from .native.runner import CHILD_SCRIPT, run_native

        return run_native(groups, timeout=self.native_timeout if timeout is None else timeout,
                          task_timeout=task_timeout, env=self.env if env is None else env,
                          script=script or CHILD_SCRIPT)

    def python_site_dirs(self) -> List[str]:
        """The running interpreter's site folders, when inspecting the live machine."""
        if not self.running_python:
            return []
        return [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
