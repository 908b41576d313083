"""Readers of file formats: pure functions of bytes and text. Import versions only."""
