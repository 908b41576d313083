"""Library names decode to the releases that ship them, minor-aware, drawn over the knowledge's own releases:
a two-part soname below 11 is that toolkit release exactly, a Windows DLL names what its Linux soname names, and
a cuDNN library's suffix is its major."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from hermetic import shipped_compat

COMPAT = shipped_compat()
RELEASES = COMPAT.cuda_releases()
ROWS = COMPAT.table("sonames", "toolkit_sonames")["rows"]
STEMS = sorted({r["stem"] for r in ROWS})


def _dll(stem: str, soname: str) -> str:
    """The Windows name NVIDIA gives the library of a Linux soname: cudart64_110.dll, cublas64_12.dll."""
    parts = soname.split(".")
    number = "".join(parts) if len(parts) == 2 else parts[0]
    return "%s64_%s.dll" % (stem[3:], number)


@given(st.sampled_from([r for r in RELEASES if Version(r) < Version("11")]), st.sampled_from(STEMS))
def test_a_two_part_soname_before_cuda_11_is_that_release_only(release, stem):
    shipped = COMPAT.shipped_by("%s.so.%s" % (stem, release))
    assert shipped is not None and (shipped.low, shipped.high) == (release, release)
    assert shipped.label == "CUDA %s" % release


@given(st.sampled_from(RELEASES))
def test_nvrtc_builtins_name_their_release_exactly(release):
    shipped = COMPAT.shipped_by("libnvrtc-builtins.so.%s" % release)
    assert shipped is not None and shipped.low == shipped.high == release


@settings(max_examples=200)
@given(st.sampled_from(ROWS), st.data())
def test_each_row_names_existing_releases_and_its_dll_names_the_same(row, data):
    shipped = COMPAT.shipped_by("%s.so.%s" % (row["stem"], row["soname"]))
    assert shipped is not None and shipped.low in RELEASES and shipped.high in RELEASES
    spec = SpecifierSet(row["cuda"])
    assert Version(shipped.low) in spec and Version(shipped.high) in spec
    inside = [r for r in RELEASES if Version(r) in spec]
    assert shipped.low == inside[0] and shipped.high == inside[-1]
    windows = COMPAT.shipped_by(_dll(row["stem"], row["soname"]))
    assert windows is not None and windows.label == shipped.label


@given(st.integers(min_value=1, max_value=12), st.sampled_from(["cudnn", "cudnn_ops_infer", "cudnn_cnn"]))
def test_a_cudnn_dll_suffix_is_its_major(major, stem):
    shipped = COMPAT.shipped_by("%s64_%d.dll" % (stem, major))
    if stem == "cudnn_ops_infer" and major != 8:
        assert shipped is None  # only cuDNN 8 had ops_infer
    else:
        assert shipped is not None and shipped.label == "cuDNN %d" % major


@given(st.integers(min_value=80, max_value=139))
def test_a_minor_encoded_cudart_dll_exists_only_for_real_releases(n):
    shipped = COMPAT.shipped_by("cudart64_%d.dll" % n)
    release = "%d.%d" % divmod(n, 10)
    if Version(release) < Version("11"):
        assert (shipped is not None) == (release in RELEASES)
    elif shipped is not None:
        assert shipped.low in RELEASES and shipped.high in RELEASES


def test_the_examples_of_the_issue():
    assert COMPAT.shipped_by("libcublas.so.9.0").label == "CUDA 9.0"
    assert COMPAT.shipped_by("libnvrtc-builtins.so.11.6").label == "CUDA 11.6"
    assert COMPAT.shipped_by("cudart64_110.dll").low == "11.0"
    assert COMPAT.shipped_by("cudart64_12.dll").low == "12.0"
    assert COMPAT.shipped_by("cudnn64_7.dll").label == "cuDNN 7"
