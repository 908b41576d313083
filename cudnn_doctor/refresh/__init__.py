"""Refreshing the knowledge base from NVIDIA's and PyPI's machine-readable sources (update, refresh script)."""
