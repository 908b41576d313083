"""Readers of file formats: pure functions of bytes and text, shared by probes and the installer."""
