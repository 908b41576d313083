"""For the benchmarks: executor.run_bounded as a plain call, so each probe's time is its own (no worker thread)."""


def plain_call(facts, name, fn, deadline) -> bool:
    """run_bounded without its worker thread and deadline: a probe that hangs hangs the benchmark, not a user."""
    fn()
    return True
