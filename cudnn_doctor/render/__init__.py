"""Renderers: a result to text or JSON, never the exit code. Import model and queries, never probes, host or native."""
