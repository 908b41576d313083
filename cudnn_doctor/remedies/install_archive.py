"""Fixes for an install refused over its source: the archive, its download, NVIDIA's manifest, its members."""
from __future__ import annotations

from ..model import Fix
from .shell import advice, run, said, stated


# --- the archive itself -------------------------------------------------------------------------------------------

def cudnn_archive_kind_fix() -> Fix:
    """The file is no archive the installer reads: get one of NVIDIA's (or PyPI's) packagings."""
    return advice("download the tarball (Linux), zip (Windows) or nvidia-cudnn-cuXX wheel from NVIDIA or PyPI")


def cudnn_archive_fix() -> Fix:
    """The archive holds no cuDNN: get the one for this platform."""
    return advice("download the cuDNN tarball for your platform from NVIDIA (or pass an nvidia-cudnn-cuXX wheel)")


def damaged_archive_fix() -> Fix:
    """A damaged or cut-off archive: fetch it again and prove it with NVIDIA's checksum."""
    return advice("download it again and compare its sha256 with NVIDIA's (pass it as --sha256)")


def download_again_fix() -> Fix:
    """The archive contradicts itself (mixed releases, header against library): a fresh copy from NVIDIA."""
    return advice("download the archive again from NVIDIA")


def archive_as_published_fix() -> Fix:
    """A member links where NVIDIA's archives never do: use the archive unchanged."""
    return advice("use the archive exactly as NVIDIA publishes it")


def one_copy_per_file_fix() -> Fix:
    """Two members land on one file: use the archive unchanged, whose files each appear once."""
    return advice("use the archive exactly as NVIDIA publishes it (one top folder, each file once)")


def hostile_archive_fix() -> Fix:
    """A member or size no cuDNN release has (escape, device, bomb): NVIDIA's archive or wheel instead."""
    return advice("use the archive exactly as NVIDIA publishes it (or the nvidia-cudnn-cuXX wheel from PyPI)")


def free_disk_space_fix() -> Fix:
    """The staged copy filled the disk: make room for the unpacked archive and run again."""
    return advice("free some space (the staged copy needs about the archive's unpacked size) and retry")


# --- the SOURCE argument ------------------------------------------------------------------------------------------

def pack_folder_fix(folder: str) -> Fix:
    """An unpacked tree was given: the archive, or the folder packed into one."""
    return stated("pass the archive itself, or pack the folder first: tar -cJf cudnn.tar.xz -C %s ." % folder)


def archive_path_fix(missing: bool) -> Fix:
    """SOURCE names no archive file: the path to look at (``missing``) or the file to pass instead."""
    return advice("check the path" if missing else "pass the archive file itself")


def sha256_value_fix() -> Fix:
    """--sha256 is no digest: where the real value comes from."""
    return said("copy the value from NVIDIA's redistrib_<version>.json or `%s`", "sha256sum FILE")


def checksum_mismatch_fix() -> Fix:
    """The archive's SHA-256 is not the expected one: fetch it again and compare with NVIDIA's value."""
    return advice("download it again from NVIDIA and check the value in redistrib_<version>.json")


def drop_sha256_fix() -> Fix:
    """--sha256 disagrees with the manifest, which is checked anyway: leave the option out."""
    return advice("drop --sha256 (the manifest's value is checked)")


# --- downloads ----------------------------------------------------------------------------------------------------

def http_needs_sha256_fix() -> Fix:
    """A plain-http download allowed without a checksum: give one, or use https."""
    return advice("add --sha256 HEX (the archive's SHA-256 from NVIDIA's https redistrib_<version>.json), "
                  "or use the https URL")


def use_https_fix() -> Fix:
    """A plain-http URL: the https one, or --allow-http with a checksum for a trusted mirror."""
    return advice("use the https URL, or pass --allow-http together with --sha256 if you trust this mirror")


def download_by_hand_fix() -> Fix:
    """A URL the installer cannot fetch: fetch it some other way and pass the file."""
    return advice("download the file yourself and pass its path")


def download_status_fix() -> Fix:
    """The server answered with an error: the URL (or the release asked for), or a file fetched by hand."""
    return advice("check the URL (and --version/--cuda), or download it yourself and pass the file")


def oversized_download_fix() -> Fix:
    """The server sent more than the archive can be: the URL, or the mirror behind it."""
    return advice("check the URL; a mirror may be serving the wrong file")


def download_network_fix() -> Fix:
    """The download broke off: the URL and the network, or a file fetched by hand."""
    return advice("check the URL and the network, or download the file yourself and pass its path")


def short_download_fix() -> Fix:
    """The download's size disagrees with the manifest: once more, then blame the mirror."""
    return advice("retry; if it persists, the mirror is broken")


# --- NVIDIA's manifest (redistrib_<version>.json) -----------------------------------------------------------------

def manifest_url_fix() -> Fix:
    """The manifest is not one for cuDNN, or not usable: look at --manifest-url."""
    return advice("check --manifest-url")


def manifest_release_fix() -> Fix:
    """The manifest describes another release than asked: look at both options."""
    return advice("check --version and --manifest-url")


def manifest_unreachable_fix() -> Fix:
    """The manifest could not be fetched: the network, or an archive fetched by hand."""
    return advice("check the network, or download the archive yourself and pass it as SOURCE")


def manifest_retry_fix() -> Fix:
    """The manifest server failed: later, or an archive fetched by hand."""
    return advice("retry later, or pass the archive yourself")


def release_label_fix(where: str) -> Fix:
    """NVIDIA lists no such release: look the label up where the manifests are (``where``)."""
    return advice("check the version at %s" % where)


def supported_platform_fix() -> Fix:
    """The release has no build for this platform."""
    return advice("install on a supported platform, or pass an archive yourself")


def only_cuda_major_fix(major: str) -> Fix:
    """The release is built for one CUDA major only: ask for that one, or another release."""
    return advice("pass --cuda %s, or pick another cuDNN release" % major)


def listed_cuda_majors_fix(majors: str) -> Fix:
    """The asked CUDA major has no build: one of those the manifest lists."""
    return advice("pass --cuda with one of: %s" % majors)


# --- NVIDIA's wheels on PyPI (when NVIDIA's download host cannot be reached) ----------------------------------------

def pypi_unreachable_fix() -> Fix:
    """Neither NVIDIA's download host nor PyPI answered: the network, or an archive fetched elsewhere."""
    return advice("check the network (or set HTTPS_PROXY), or download the cuDNN archive or its nvidia-cudnn-cuNN "
                  "wheel on a machine that can and pass the file as SOURCE")


def pypi_release_fix(project: str) -> Fix:
    """PyPI has no wheel of that release for this platform: the releases it has."""
    return run("pip index versions %s" % project,
               text="pick a release PyPI has (`pip index versions %s` lists them), or pass an archive as SOURCE"
                    % project)


def wheel_record_fix() -> Fix:
    """A file in the downloaded wheel differs from the checksum its RECORD gives: a damaged or altered wheel."""
    return advice("download it again; if it persists, the index serves an altered wheel: use NVIDIA's archive")
