"""digest.sha256_hex is hashlib's SHA-256 (the fingerprint in every report and the cache's file names use it)."""
import hashlib

from hypothesis import given, strategies as st

from cudnn_doctor.digest import sha256_hex


@given(st.binary(max_size=5000))
def test_it_is_hashlibs_digest(data):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
