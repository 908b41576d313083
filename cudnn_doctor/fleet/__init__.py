"""`fleet`: merges nodes' `check --json` reports, probing nothing. Imports render and below, never commands."""
