"""The doctor-style terminal report: one marked section per layer (a finding counts toward the section its rule
declares in @rule), then the findings with their fixes."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from rich.console import Console
from rich.text import Text

from .. import __version__
from ..model import Facts, Finding, Severity
from ..results import Report
from .node import node_lines

MARKS = {"ok": ("[✓]", "green"), "info": ("[·]", "cyan"), "warning": ("[!]", "yellow"), "error": ("[✗]", "red")}
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


_STATES = ("ok", "info", "warning", "error")


def _section_state(findings: List[Finding], floor: str = "ok") -> str:
    """The worst of the section's findings, never better than what the section itself shows (`floor`)."""
    worst = max((f.severity.rank for f in findings), default=-1)
    return max({-1: "ok", 0: "info", 1: "warning", 2: "error"}[worst], floor, key=_STATES.index)


def _floor(key: str, facts: Facts) -> str:
    """✓ only where something was found and is fine: a required layer found empty is a warning (a GPU, a toolkit,
    the driver library a plain process must load), an optional one empty is information."""
    if key == "gpus" and not facts.gpus:
        return "warning"
    if key == "toolkits" and not facts.toolkits:
        return "warning"
    if key == "driver" and not facts.driver.version:
        return "warning"
    if key == "loader":
        resolved = facts.loader.resolved
        libcuda = resolved.get("libcuda.so.1")
        if libcuda is not None and not libcuda.path:
            return "warning"
        if not resolved or any(not r.path for r in resolved.values()):
            return "info"
    if key == "cudnn" and not facts.cudnn:
        return "info"
    if key == "python" and not facts.python.frameworks:
        return "info"
    return "ok"


def _head(console: Console, state: str, title: str) -> None:
    mark, style = MARKS[state]
    line = Text()
    line.append(mark, style=style)
    line.append(" " + title, style="bold")
    console.print(line)


def _detail(console: Console, text: str, style: Optional[str] = None) -> None:
    # Never wrapped here: a fix's commands and URLs stay whole on their line for a paste (the terminal folds it).
    console.print(Text("    " + text, style=style or ""), soft_wrap=True)


def _sections(facts: Facts, verbose: int) -> List[Tuple[str, str, List[str]]]:
    d = facts.driver
    driver_lines = []
    if d.version or d.kernel_module_version:
        driver_lines.append("driver %s · supports CUDA %s · kernel module %s" % (
            d.version or "unknown", d.cuda_version or "unknown", d.kernel_module_version or "not loaded"))
    else:
        driver_lines.append("no NVIDIA driver found")
    if d.nvml_error:
        driver_lines.append("NVML: %s" % d.nvml_error)
    if verbose:
        driver_lines += ["version from %s" % d.version_source] if d.version_source else []
        driver_lines += ["libcuda.so.1 -> %s" % d.libcuda_path] if d.libcuda_path else []
        driver_lines += ["libnvidia-ml.so.1 -> %s" % d.libnvml_path] if d.libnvml_path else []
        h = facts.host
        driver_lines.append("host: kernel %s%s%s" % (h.kernel_release or "?", ", container" if h.in_container else "",
                                                     ", WSL" if h.wsl else ""))

    gpu_lines = []
    for g in facts.gpus:
        line = "GPU %d  %s  compute capability %s  %s MiB" % (
            g.index, g.name or "?", g.compute_capability or "?", g.memory_total_mib if g.memory_total_mib else "?")
        if g.visible is False:
            line += "  (hidden by CUDA_VISIBLE_DEVICES)"
        if g.mig_mode:
            line += "  MIG on"
        gpu_lines.append(line)
        if verbose:
            gpu_lines.append("  uuid %s · compute mode %s · %s process(es)" % (g.uuid, g.compute_mode,
                                                                              g.running_processes))
    if not facts.gpus:
        gpu_lines.append("no GPU visible to NVML")
    if facts.visibility.cuda_visible_devices is not None:
        gpu_lines.append("CUDA_VISIBLE_DEVICES=%r" % facts.visibility.cuda_visible_devices)
    gpu_lines += node_lines(facts, verbose)

    tk_lines = []
    for t in facts.toolkits:
        where = t.path + (" -> %s" % t.realpath if t.realpath and t.realpath != t.path else "")
        line = "CUDA %s  %s" % (t.version or "unknown version", where)
        if t.kind != "system":
            line += "  (%s)" % t.kind
        tk_lines.append(line)
        if verbose:
            tk_lines.append("  version from %s · found via %s" % (t.version_source or "nothing readable",
                                                                   ", ".join(t.found_via)))
    if not facts.toolkits:
        tk_lines.append("no CUDA toolkit found")

    cudnn_lines = []
    for c in facts.cudnn:
        line = "cuDNN %s  built for CUDA %s  %s  [%s]" % (c.version or "unknown", c.cuda_version or "?", c.path,
                                                         c.origin)
        cudnn_lines.append(line)
        extra = []
        if c.header_path:
            extra.append("header %s (%s)" % (c.header_version or "no version", c.header_path))
        if c.package:
            extra.append(c.package)
        if c.load_error:
            extra.append("load failed: %s" % c.load_error)
        if extra:
            cudnn_lines.append("  " + " · ".join(extra))
        if verbose:
            cudnn_lines.append("  version from %s · found via %s" % (c.version_source, ", ".join(c.found_via)))
            subs = [f.name for f in c.files if f.name.startswith("libcudnn_") and f.name.count(".") == 2]
            if subs:
                cudnn_lines.append("  sub-libraries: %s" % ", ".join(subs))
    if not facts.cudnn:
        cudnn_lines.append("no cuDNN library found")
    for item in facts.cudnn_leftovers:  # remains of a removed copy: named, not read as absence
        if item["kind"] != "missing-soname-link":
            cudnn_lines.append("leftover of cuDNN %s: %s" % (item.get("version") or "?", item["path"]))

    loader_lines = []
    for name, res in sorted(facts.loader.resolved.items()):
        if res.path:
            line = "%s -> %s (%s)" % (name, res.realpath or res.path, res.via)
            if res.shadowed:
                line += ", shadows %d other cop%s" % (len(res.shadowed), "y" if len(res.shadowed) == 1 else "ies")
        else:
            line = "%s -> not found" % name
        loader_lines.append(line)
        if verbose:
            loader_lines += ["  also: %s (%s)" % (s["path"], s["via"]) for s in res.shadowed]
            loader_lines += ["  %s" % p for p in res.problems]
    if facts.windows is not None:
        from .windows import loader_lines as windows_loader_lines

        loader_lines = windows_loader_lines(facts, verbose)
    if verbose and facts.loader.ld_library_path:
        loader_lines.append("LD_LIBRARY_PATH=%s" % ":".join(facts.loader.ld_library_path))

    py_lines = []
    for fw in facts.python.frameworks:
        line = "%s %s" % (fw.name, fw.version)
        if fw.cuda_build is False:
            line += "  (CPU-only build)"
        elif fw.cuda_version:
            line += "  built for CUDA %s" % fw.cuda_version
        if fw.resolved_cudnn and fw.resolved_cudnn.path:
            line += "  loads %s" % (fw.resolved_cudnn.realpath or fw.resolved_cudnn.path)
        py_lines.append(line)
        if verbose:
            py_lines.append("  in %s" % fw.location)
    if not facts.python.frameworks:
        py_lines.append("no GPU framework found in the Python environments searched")

    if facts.image is not None:  # check --image: the driver and GPUs are the node's, or still to come
        if facts.image.node is None:
            driver_lines = ["to be judged on the node: the runtime mounts the node's driver into the container"]
            gpu_lines = ["to be judged on the node (--against NODE.json, or fleet --image)"]
        else:
            driver_lines.insert(0, "from %s's report" % facts.image.node)
            gpu_lines.insert(0, "from %s's report" % facts.image.node)
    return [
        ("driver", "NVIDIA driver", driver_lines),
        ("gpus", "GPUs (%d)" % len(facts.gpus), gpu_lines),
        ("toolkits", "CUDA toolkits (%d)" % len(facts.toolkits), tk_lines),
        ("cudnn", "cuDNN copies (%d)" % len(facts.cudnn), cudnn_lines),
        ("loader", "What a plain process loads", loader_lines),
        ("python", "Python frameworks (%d)" % len(facts.python.frameworks), py_lines),
    ]


def _finding(console: Console, f: Finding, verbose: int) -> None:
    line = Text("  ")
    line.append("%s %s" % ({Severity.ERROR: "✗", Severity.WARNING: "!", Severity.INFO: "·"}[f.severity], f.id),
                style=SEVERITY_STYLE[f.severity])
    line.append("  " + f.title)
    console.print(line)
    if f.severity != Severity.INFO or verbose:
        if f.detail:
            _detail(console, "Why: " + f.detail)
        if f.remedy:
            _detail(console, "Fix: " + f.remedy.text, style="bold")
    if verbose and f.evidence:
        for key, value in f.evidence.items():
            _detail(console, "  %s: %s" % (key, value), style="dim")


def render_human(report: Report, console: Console, verbose: int = 0, quiet: int = 0) -> None:
    facts = report.facts
    # Imported here: smoke_human and bench_human take MARKS from this module and need no rule registry.
    from ..rules import section_of

    by_section: Dict[str, List[Finding]] = {}
    for f in report.findings:
        by_section.setdefault(section_of(f.id), []).append(f)  # the section its rule declares in @rule
    if not quiet:
        root = "" if facts.host.root == "/" else " · root %s" % facts.host.root
        if facts.windows is not None:
            root += " read as drive C: of a Windows machine" if root else " · Windows"
        console.print(Text("cudnn-doctor %s%s" % (__version__, root), style="dim"))
        for key, title, lines in _sections(facts, verbose):
            floor = _floor(key, facts) if facts.windows is None else "ok"
            _head(console, _section_state(by_section.get(key, []), floor), title)
            for line in lines:
                _detail(console, line)
        smoke = report.smoke
        if smoke is not None:
            _head(console, "ok" if smoke.ok else "error", "cuDNN smoke test")
            _detail(console, smoke.summary or ("passed" if smoke.ok else "failed"))
        knowledge = report.knowledge
        if verbose and knowledge is not None:  # how current the answers are (issue 20)
            _detail(console, "Knowledge: dated %s (%s); newest cuDNN %s, CUDA %s; `%s` refreshes it" % (
                knowledge.date or "?", knowledge.origin, knowledge.newest_cudnn or "?",
                knowledge.newest_cuda or "?", knowledge.update))
        if verbose and facts.searched:
            console.print(Text("Searched", style="bold"))
            for probe, places in facts.searched.items():
                _detail(console, "%s: %d place%s" % (probe, len(places), "" if len(places) == 1 else "s"))
                if verbose > 1:
                    for place in places:
                        _detail(console, "  " + place, style="dim")
        console.print()
    shown = [f for f in report.findings if verbose or f.severity != Severity.INFO or not quiet]
    if shown:
        console.print(Text("Findings", style="bold"))
        if facts.image is not None:  # check --image: the machine a fix is for is the image (or the named node)
            _detail(console, "Fixes about the image's own files go into its build, as RUN lines without sudo; fixes "
                             "that name a node are for that node.", style="dim")
        for f in shown:
            _finding(console, f, verbose)
        console.print()
    errors = sum(1 for f in report.findings if f.severity == Severity.ERROR)
    warnings = sum(1 for f in report.findings if f.severity == Severity.WARNING)
    if errors or warnings:
        summary = Text("%d problem%s (%d error%s, %d warning%s)" % (
            errors + warnings, "" if errors + warnings == 1 else "s", errors, "" if errors == 1 else "s",
            warnings, "" if warnings == 1 else "s"), style="bold red" if errors else "bold yellow")
    else:
        summary = Text("No problems found.", style="bold green")
    console.print(summary)
