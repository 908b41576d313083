"""The diagnosis core: observe the machine, judge the facts, and return one Report (commands only render it)."""
from __future__ import annotations

import fnmatch
import functools
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar

from .host import Host
from .model import WINDOWS_SHELL, Facts, Finding, Severity, Target
from .probes.executor import DEFAULT_TIMEOUT  # noqa: F401  (the commands' --timeout default)
from .results import Report, SmokeSkipped

if TYPE_CHECKING:
    from .host import NativeSession
    from .results import SmokeOutcome

T = TypeVar("T")

# The one finding the core makes itself (every other id belongs to a rule).
PROBE_FAILED = ("CD001", "probe-failed")


def collect_facts(root: str = "/", env: Optional[Mapping[str, str]] = None,
                  timeout: Optional[float] = None, sonames: Sequence[str] = (), ready: bool = False,
                  early: Optional["NativeSession"] = None) -> Facts:
    """Observe the machine (or the filesystem under ``root``) within ``timeout`` seconds; return the facts.
    ``sonames``: more library names for the loader probe to resolve (explain's pasted names); ``ready``: also
    run the readiness kernel on every GPU; ``early``: the native child cli.main started before the imports (used
    when it suits this run)."""
    from .probes import collect

    # The knowledge is handed to the probes (they never load it themselves) as its loader, one cached call: the
    # first probe that needs it reads it; the rules are imported (_ready_to_judge) while the native child works.
    return collect(Host(root=root, env=env), timeout=timeout, meanwhile=_ready_to_judge, compat=_knowledge,
                   sonames=sonames, ready=ready, early=early)


def _knowledge() -> Any:
    from .knowledge import load_compat

    return load_compat()


def loader_facts(names: Sequence[str], root: str = "/") -> Facts:
    """Only what the loader resolves for ``names``: a fraction of the probes, for `smoke` and `bench`."""
    from .probes.hostinfo import in_container, in_wsl
    from .probes.loader import LoaderView

    facts = Facts()
    host = Host(root)
    view = LoaderView(host)
    # Where a missing driver has to come from (container, WSL, host) decides the fix smoke and bench print.
    facts.host.in_container, facts.host.wsl = in_container(host), in_wsl(host)
    for name in names:
        facts.loader.resolved[name] = view.resolve(name)
    return facts


def _ready_to_judge() -> None:
    """Import every rule and read the knowledge base (both kept for the process): collect runs this while the
    native child finishes its calls, which would otherwise leave the main thread waiting."""
    from .knowledge import load_compat
    from .rules import registry  # noqa: F401  (importing it registers every rule)

    load_compat()


def probe_error_findings(facts: Facts) -> List[Finding]:
    """A probe that failed is reported, so a blind spot is never mistaken for a healthy machine."""
    from .remedies.doctor import probe_failed_fix

    return [
        Finding(
            id=PROBE_FAILED[0],
            severity=Severity.WARNING,
            title="The %s probe failed: %s" % (e.probe, e.error),
            detail="cudnn-doctor could not inspect this part of the machine, so findings about it may be missing.",
            remedy=probe_failed_fix(),
            alias=PROBE_FAILED[1],
        )
        for e in facts.probe_errors
    ]


def fix_target(facts: Facts) -> Target:
    """The Target this run's fixes are built for: the root and user the facts saw (an image's fixes go into its
    build, a Windows drive's are typed on that machine, in PowerShell: the one shell Windows fixes are written
    for) and how this cudnn-doctor is started here."""
    from .queries import platform_of

    doctor, on_path = Host.doctor_start()
    windows = platform_of(facts) == "windows"
    root = "/" if facts.image is not None or windows else (facts.host.root or "/")
    return Target(root=root, as_root=facts.host.euid == 0 and not Host.started_by_sudo(),
                  shell=WINDOWS_SHELL if windows else "sh", doctor=doctor, doctor_on_path=on_path,
                  pip=facts.python.package_tool or "pip")


def this_machine_target() -> Target:
    """The Target of fixes for the machine the doctor runs on, as the user who started it: what smoke, bench and
    the installer print (no Facts precede them)."""
    doctor, on_path = Host.doctor_start()
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    return Target(as_root=euid == 0 and not Host.started_by_sudo(), doctor=doctor, doctor_on_path=on_path)


@contextmanager
def fixes_here() -> Iterator[Target]:
    """Fixes built inside this block are written for the machine the doctor runs on (this_machine_target)."""
    from .remedies.acting import building_for

    with building_for(this_machine_target()) as target:
        yield target


def fixes_for_this_machine(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` with the fixes it builds written for the machine the doctor runs on, as this user (the installer's
    refusals and notes, smoke's and bench's choice of library)."""
    @functools.wraps(func)
    def built_here(*args: Any, **kwargs: Any) -> T:
        with fixes_here():
            return func(*args, **kwargs)
    return built_here


def collect_report(root: str = "/", env: Optional[Mapping[str, str]] = None, requires: Sequence[str] = (),
                   target: Optional[str] = None, smoke: Optional[SmokeOutcome] = None,
                   facts: Optional[Facts] = None, skip: Sequence[str] = ()) -> Report:
    """Facts plus the judgement of every rule: the one result object every renderer reads."""
    from .knowledge import load_compat
    from .rules import RuleContext, evaluate

    facts = facts if facts is not None else collect_facts(root, env)
    from .remedies.acting import building_for

    compat = load_compat()
    context = RuleContext(compat=compat, requires=list(requires), target=target, smoke=smoke,
                          fix_target=fix_target(facts))
    findings, ran = evaluate(facts, context)
    with building_for(context.fix_target):
        findings = probe_error_findings(facts) + findings
    if skip:
        aliases = {rid: alias for rid, alias, _ in known_checks()}
        findings = [f for f in findings if not skipped(f.id, f.alias, skip)]
        ran = [r for r in ran if not skipped(r, aliases.get(r, ""), skip)]
    return Report(facts=facts, findings=findings, rules_run=ran, smoke=smoke,
                  knowledge=compat.knowledge_summary())  # how current the answers are (-v, --json)


def diagnose(root: str = "/", env: Optional[Mapping[str, str]] = None, requires: Sequence[str] = (),
             target: Optional[str] = None, skip: Sequence[str] = (), smoke: bool = False,
             timeout: Optional[float] = None, sonames: Sequence[str] = (), ready: bool = False,
             early: Optional["NativeSession"] = None) -> Report:
    """Observe, optionally run the cuDNN smoke test on what was found, and judge: what `check` prints."""
    facts = collect_facts(root, env, timeout=timeout, sonames=sonames, ready=ready, early=early)
    smoke_result = run_smoke_on(facts, root) if smoke else None
    return collect_report(root, env, requires=requires, target=target, smoke=smoke_result, facts=facts, skip=skip)


def known_checks() -> List[Tuple[str, str, str]]:
    """(id, alias, title) of every rule, sorted by id."""
    from .rules import RULES
    from .rules import registry  # noqa: F401  (importing it registers every rule)

    return sorted(((r.id, r.alias, r.title) for r in RULES), key=lambda r: r[0])


def skipped(rule_id: str, alias: str, patterns: Sequence[str]) -> bool:
    """Whether --skip patterns (ids, id wildcards or aliases) leave this check out."""
    return any(fnmatch.fnmatchcase(rule_id, p.upper()) or (alias and alias == p) for p in patterns)


def unknown_skips(patterns: Sequence[str]) -> List[str]:
    """The --skip patterns that match no check (the core's own probe-failed finding included)."""
    known = [(rid, alias) for rid, alias, _ in known_checks()] + [PROBE_FAILED]
    return [p for p in patterns if not any(skipped(rid, alias, [p]) for rid, alias in known)]


def run_smoke_on(facts: Facts, root: str = "/") -> SmokeOutcome:
    """Run the cuDNN smoke test on the copy a plain process would load (its paths as the root's programs see them)."""
    from .knowledge import load_compat
    from .queries import loaded_cudnn
    from .remedies.doctor import no_cudnn_to_smoke_fix
    from .smoke import run_smoke

    from .remedies.acting import building_for

    res = loaded_cudnn(facts)
    with building_for(fix_target(facts)):  # the result's fix is for the machine check judges, as check's are
        if res is None or res.path is None:  # loaded_cudnn answers only with a found path
            fix = no_cudnn_to_smoke_fix(facts, load_compat())
            return SmokeSkipped(summary="no cuDNN library that a plain process would load was found", fix=fix.text)
        host = Host(root)
        # The driver library the loader picks (it may live only on LD_LIBRARY_PATH, which the child does not get).
        libcuda = facts.loader.resolved.get("libcuda.so.1")
        driver = str(host.real(libcuda.path)) if libcuda is not None and libcuda.path else None
        return run_smoke(str(host.real(res.path)), driver_library=driver, host=host)


def image_report(facts: Facts, node=None, requires: Sequence[str] = (), target: Optional[str] = None,
                 skip: Sequence[str] = ()) -> Report:
    """An image's facts judged alone (the driver and GPU checks left to the node) or on a node: the node's driver
    and GPUs (image/node.py's NodeView) in place of the image's, its own driver health left to its own report."""
    from .image.node import on_node
    from .rules.image import NODE_CHECKS, NODE_OWN_CHECKS

    if node is not None:
        facts = on_node(facts, node)
    node_side = NODE_OWN_CHECKS if node is not None else NODE_CHECKS
    return collect_report(requires=requires, target=target, facts=facts, skip=list(skip) + list(node_side))
