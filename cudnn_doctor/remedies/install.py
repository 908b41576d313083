"""Fixes for an install or rollback refused over its target, its fit, or a failure part-way (the archive's own
troubles are in remedies/install_archive)."""
from __future__ import annotations

from ..knowledge import Compat
from ..model import Fix
from .acting import at, doctor, ldconfig
from .shell import advice, q, run, said


# --- what to install ----------------------------------------------------------------------------------------------

def add_cuda_major_fix() -> Fix:
    """--version without --cuda: NVIDIA builds per CUDA major, so name one."""
    return advice("add --cuda 12 (or the major of your toolkit)")


def name_a_source_fix() -> Fix:
    """Neither an archive nor a release was given: an example of the first."""
    example = doctor("install cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz")
    return run(example, text="e.g. " + example)


# --- where it goes ------------------------------------------------------------------------------------------------

def prefix_folder_fix() -> Fix:
    """--prefix names something other than a folder."""
    return advice("pass a folder (it is created if missing)")


def create_parent_fix(parent: str) -> Fix:
    """--prefix's parent folder is missing: only the last folder is created."""
    return advice("create %s first" % parent)


def toolkit_folder_fix() -> Fix:
    """--cuda-home names something other than a folder: the toolkit's folder, or --prefix for a plain one."""
    return advice("pass the toolkit folder (e.g. /usr/local/cuda-12.4), or install into a plain folder with "
                  "--prefix DIR")


def name_the_toolkit_fix() -> Fix:
    """No toolkit where the default points: name it, or install into a plain folder."""
    return advice("pass the toolkit with --cuda-home DIR, or install into a plain folder with --prefix DIR")


def toolkit_or_prefix_fix(given: str) -> Fix:
    """The folder does not look like a toolkit: name the real one, or install into ``given`` as a plain folder."""
    return advice("pass the toolkit folder (e.g. /usr/local/cuda-12.4) with --cuda-home, "
                  "or use --prefix %s to install into it as a plain folder" % given)


def write_access_fix() -> Fix:
    """No permission to write into the target: root, or a folder of one's own."""
    return advice("run it with sudo, or install into a folder you own with --prefix DIR")


def wait_for_lock_fix() -> Fix:
    """Another install or rollback holds the target's lock."""
    return advice("wait for it to finish, or retry with --lock-wait 600")


def move_folder_fix() -> Fix:
    """A folder stands where the archive puts a file."""
    return advice("move that folder away, then install again")


# --- whether it fits (each overridable with --force) --------------------------------------------------------------

def platform_archive_fix() -> Fix:
    """The archive is for another OS or architecture."""
    return advice("use the cuDNN archive for this platform, or pass --force if this is deliberate")


def cuda_build_fix(compat: Compat, cuda_major: str, cudnn_version: str) -> Fix:
    """The cuDNN build is for another CUDA than the toolkit's: the same release built for ``cuda_major`` where NVIDIA
    made one, else the newest of its major that exists (the knowledge's validator picks: CUDA 13 builds start at
    9.12.0, so 9.5.1 becomes the newest cuDNN 9 for CUDA 13)."""
    release = compat.cudnn_release_to_name(cuda_major, cudnn_version)
    if release is None:
        return said("install a cuDNN built for CUDA %s (`%%s` lists them), or pass --force" % cuda_major,
                    doctor("matrix --cuda %s.0" % cuda_major))
    return advice("install the cuDNN build for CUDA %s (e.g. --version %s --cuda %s), or pass --force"
                  % (cuda_major, release, cuda_major))


def missing_dependency_fix() -> Fix:
    """The archive's library does not load here: what the loader names as missing."""
    return advice("install what the loader says is missing, or pass --force to install anyway")


def failed_load_check_fix() -> Fix:
    """The installed library failed its load check and was undone."""
    return advice("download the archive again; pass --force to keep such an install anyway")


# --- failures part-way --------------------------------------------------------------------------------------------

def retry_install_fix() -> Fix:
    """An OS error left the target as it was: repair the cause, then install again."""
    return advice("fix the cause (disk space, permissions) and run the install again")


def finish_repair_fix(rollback: str) -> Fix:
    """Repairing an earlier interrupted run failed: ``rollback`` (the target's rollback command) finishes it."""
    return said("fix the cause, then run `%s` (it finishes the repair; each step can be repeated)", rollback)


def undo_command(kind: str, where: str, root_owned: bool) -> str:
    """`cudnn-doctor rollback` for an install's target (a toolkit, or a --prefix folder), by this cudnn-doctor's
    absolute words under sudo where the install's files and record are root's and the user is not."""
    return doctor("rollback %s %s" % ("--prefix" if kind == "prefix" else "--cuda-home", q(at(where))),
                  privileged=root_owned)


def finish_undo_fix(rollback: str) -> Fix:
    """Undoing a failed install failed too: ``rollback`` finishes undoing it."""
    return said("fix the cause, then run `%s` (it finishes undoing; each step can be repeated)", rollback)


def finish_recording_fix(rollback: str) -> Fix:
    """The install stands but its record did not reach the history: the next install or ``rollback`` records it."""
    return run(rollback, alternatives=[doctor("install")],
               text="none needed: the next `%s` or `%s` finishes recording it" % (doctor("install"), rollback))


def undo_unknown_state_fix() -> Fix:
    """An install stopped by an unexpected OS error: rollback undoes whatever it left unfinished."""
    return said("run `%s` for this target, which undoes an unfinished install (or the last one)", doctor("rollback"))


def check_after_interrupt_fix() -> Fix:
    """The install stood when a signal cut the checks after it short: run them, or undo the install."""
    return run(doctor("check"), text="run `%s` (or `%s` to undo it)" % (doctor("check"), doctor("rollback")),
               alternatives=[doctor("rollback")])


# --- after the install (notes in its report; the install stands) ---------------------------------------------------

def ldconfig_if_listed_fix(lib_dir: str) -> Fix:
    """Whether ldconfig should run could not be decided: run it where the loader's configuration lists ``lib_dir``."""
    return said("run `%s` if " + lib_dir.replace("%", "%%") + " is in ld.so.conf", ldconfig())


def ldconfig_by_hand_fix() -> Fix:
    """ldconfig could not be started after the install: run it by hand."""
    return run(ldconfig(), text="run `%s` yourself" % ldconfig())


def check_by_hand_fix() -> Fix:
    """The check after the install could not run: run it by hand."""
    return run(doctor("check"), text="run `%s` yourself" % doctor("check"))


# --- rollback -----------------------------------------------------------------------------------------------------

def roll_back_changed_fix(set_aside: str) -> Fix:
    """A placed file changed since the install: see who wrote it, or force the rollback (files go to ``set_aside``)."""
    return advice("check what wrote it; to roll back anyway re-run with --force (changed files are moved to %s, "
                  "not deleted)" % set_aside)


def restore_by_hand_fix(entry: str) -> Fix:
    """A history entry without a journal: its backup is there to restore from, by hand."""
    return advice("restore the files by hand from %s/backup, then delete that folder" % entry)


def repeat_rollback_fix() -> Fix:
    """A rollback stopped by a signal: the same rollback finishes it."""
    return advice("run the same rollback again, which finishes it (each step can be repeated)")


def resume_rollback_fix() -> Fix:
    """A rollback stopped by an OS error: repair the cause, and the same rollback resumes it."""
    return advice("fix the cause and run the same rollback again, which resumes where this one stopped (each step "
                  "can be repeated safely)")
