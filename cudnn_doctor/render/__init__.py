"""Renderers: turn a Report into text. They never choose the exit code."""
