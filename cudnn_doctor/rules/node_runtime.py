"""CD770-CD771: the container runtime's side of the GPUs: the NVIDIA Container Toolkit registered with docker and
containerd, and CDI specs that match the live driver and GPUs."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..queries import driver_version
from ..remedies.node import cdi_generate_fix, runtime_configure_fix
from . import LINUX, RuleContext, rule
from .common import ERROR, WARNING, finding


@rule("CD770", "container-runtime-not-configured", "The NVIDIA Container Toolkit is not configured for a runtime",
      platforms=LINUX)
def runtime_configured(facts: Facts, ctx: RuleContext) -> List[Finding]:
    container = facts.node.container
    if not container.get("toolkit") or not facts.gpus or facts.host.in_container:
        return []
    out: List[Finding] = []
    for runtime, state in sorted((container.get("runtimes") or {}).items()):
        if runtime == "podman" or state.get("configured"):
            continue  # podman takes GPUs through CDI (CD771)
        out.append(finding(
            "CD770", WARNING, "%s is installed but not configured to use the NVIDIA Container Toolkit" % runtime,
            detail="Containers started with --gpus (docker) or the nvidia runtime class (containerd, Kubernetes) "
                   "get no GPU: 'could not select device driver \"\" with capabilities: [[gpu]]'.",
            remedy=runtime_configure_fix(runtime), evidence={"runtime": runtime, "toolkit": container["toolkit"]}))
    return out


@rule("CD771", "cdi-spec-stale", "The CDI spec for the GPUs is missing or stale", platforms=LINUX)
def cdi_spec(facts: Facts, ctx: RuleContext) -> List[Finding]:
    container = facts.node.container
    driver = driver_version(facts)
    if not container.get("toolkit") or not facts.gpus or facts.host.in_container:
        return []
    specs = container.get("cdi") or []
    if not specs:
        if "podman" not in (container.get("runtimes") or {}):
            return []
        return [finding(
            "CD771", ERROR, "podman is installed but no CDI spec describes the GPUs",
            detail="podman gives containers GPUs through CDI (--device nvidia.com/gpu=all); without a spec it "
                   "answers 'unresolvable CDI devices nvidia.com/gpu=all'.",
            remedy=cdi_generate_fix(), evidence={"runtimes": sorted(container.get("runtimes") or {})})]
    live = {"/dev/" + n for n in container.get("device_nodes") or []}
    out: List[Finding] = []
    for spec in specs:
        problems = []
        if driver and spec["driver_versions"] and driver not in spec["driver_versions"]:
            problems.append("it names driver %s, the node runs %s" % (", ".join(spec["driver_versions"]), driver))
        gone = [n for n in spec["device_nodes"] if n not in live]
        if gone:
            problems.append("device node%s %s no longer exist%s" % ("" if len(gone) == 1 else "s", ", ".join(gone),
                                                                   "s" if len(gone) == 1 else ""))
        missing = sorted(n for n in live if n[len("/dev/nvidia"):].isdigit() and n not in spec["device_nodes"])
        if missing:
            problems.append("it lacks %s" % ", ".join(missing))
        if problems:
            out.append(finding(
                "CD771", ERROR, "The CDI spec %s is stale: %s" % (spec["path"], "; ".join(problems)),
                detail="A spec is a snapshot of the driver's files and device nodes at generation time; after a "
                       "driver upgrade or a GPU change containers fail to start or get the wrong libraries.",
                remedy=cdi_generate_fix(), evidence=dict(spec, driver=driver)))
    return out
