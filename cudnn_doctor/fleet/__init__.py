"""`cudnn-doctor fleet`: merge many nodes' `check --json` reports into one picture; it never probes a machine."""
