"""Refreshing the knowledge base from NVIDIA's and PyPI's machine-readable sources (update, refresh script).
Imports knowledge, render (to write files atomically) and versions, never probes or commands."""
