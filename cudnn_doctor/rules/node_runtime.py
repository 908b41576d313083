"""CD770-CD772: the container runtime's side of the GPUs: the NVIDIA Container Toolkit registered with docker and
containerd, CDI specs that match the live driver and GPUs, and the device nodes the driver makes only on demand
(nvidia-uvm, nvidia-modeset) that a spec names or lacks."""
from __future__ import annotations

from typing import List, Set

from ..model import Facts, Finding
from ..queries import driver_version
from ..remedies.node import cdi_generate_fix, on_demand_nodes_fix, runtime_configure_fix
from . import LINUX, RuleContext, rule
from .common import ERROR, WARNING, finding

# Device nodes the driver creates only when asked (nvidia-modprobe, which libcuda runs at the host's first cuInit):
# after a boot they are missing until then. nvidia-uvm backs every CUDA context; nvidia-modeset serves display and
# graphics (the X server, Vulkan/EGL direct display, nvidia-drm), never CUDA.
UVM_NODES = ("/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
ON_DEMAND = UVM_NODES + ("/dev/nvidia-modeset",)


def _host_runtime(facts: Facts) -> bool:
    """The container runtime is judged on a GPU host with the toolkit (inside a container there is none to fix)."""
    return bool(facts.node.container.get("toolkit")) and bool(facts.gpus) and not facts.host.in_container


def _live_nodes(facts: Facts) -> Set[str]:
    return {"/dev/" + n for n in facts.node.container.get("device_nodes") or []}


@rule("CD770", "container-runtime-not-configured", "The NVIDIA Container Toolkit is not configured for a runtime",
      platforms=LINUX, section="python")
def runtime_configured(facts: Facts, ctx: RuleContext) -> List[Finding]:
    container = facts.node.container
    if not _host_runtime(facts):
        return []
    out: List[Finding] = []
    for runtime, state in sorted((container.get("runtimes") or {}).items()):
        if runtime == "podman" or state.get("configured"):
            continue  # podman takes GPUs through CDI (CD771)
        out.append(finding(
            WARNING, "%s is installed but not configured to use the NVIDIA Container Toolkit" % runtime,
            detail="Containers started with --gpus (docker) or the nvidia runtime class (containerd, Kubernetes) "
                   "get no GPU: 'could not select device driver \"\" with capabilities: [[gpu]]'.",
            remedy=runtime_configure_fix(runtime), evidence={"runtime": runtime, "toolkit": container["toolkit"]}))
    return out


@rule("CD771", "cdi-spec-stale", "The CDI spec for the GPUs is missing or stale", platforms=LINUX, section="python")
def cdi_spec(facts: Facts, ctx: RuleContext) -> List[Finding]:
    container = facts.node.container
    driver = driver_version(facts)
    if not _host_runtime(facts):
        return []
    specs = container.get("cdi") or []
    if not specs:
        if "podman" not in (container.get("runtimes") or {}):
            return []
        return [finding(
            ERROR, "podman is installed but no CDI spec describes the GPUs",
            detail="podman gives containers GPUs through CDI (--device nvidia.com/gpu=all); without a spec it "
                   "answers 'unresolvable CDI devices nvidia.com/gpu=all'.",
            remedy=cdi_generate_fix(), evidence={"runtimes": sorted(container.get("runtimes") or {})})]
    live = _live_nodes(facts)
    out: List[Finding] = []
    for spec in specs:
        problems = []
        if driver and spec["driver_versions"] and driver not in spec["driver_versions"]:
            problems.append("it names driver %s, the node runs %s" % (", ".join(spec["driver_versions"]), driver))
        gone = [n for n in spec["device_nodes"] if n not in live and n not in ON_DEMAND]  # those: CD772
        if gone:
            problems.append("device node%s %s no longer exist%s" % ("" if len(gone) == 1 else "s", ", ".join(gone),
                                                                   "s" if len(gone) == 1 else ""))
        missing = sorted(n for n in live if n[len("/dev/nvidia"):].isdigit() and n not in spec["device_nodes"])
        if missing:
            problems.append("it lacks %s" % ", ".join(missing))
        if problems:
            out.append(finding(
                ERROR, "The CDI spec %s is stale: %s" % (spec["path"], "; ".join(problems)),
                detail="A spec is a snapshot of the driver's files and device nodes at generation time; after a "
                       "driver upgrade or a GPU change containers fail to start or get the wrong libraries.",
                remedy=cdi_generate_fix(), evidence=dict(spec, driver=driver)))
    return out


@rule("CD772", "container-device-nodes", "A CDI spec names device nodes the host lacks, or lacks nvidia-uvm",
      platforms=LINUX, section="python")
def on_demand_nodes(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not _host_runtime(facts):
        return []
    live = _live_nodes(facts)
    out: List[Finding] = []
    for spec in facts.node.container.get("cdi") or []:
        named = [n for n in ON_DEMAND if n in spec["device_nodes"] and n not in live]
        if named:  # the runtime cannot create the container: every node a spec names must exist
            out.append(finding(
                ERROR, "Containers given GPUs through %s fail to start: %s %s missing on the host" % (
                    spec["path"], ", ".join(named), "is" if len(named) == 1 else "are"),
                detail="The driver creates %s only on demand (the host's first CUDA program runs nvidia-modprobe), "
                       "so after a boot it is absent until then, and a runtime cannot inject a node that does "
                       "not exist ('no such file or directory'). Create it; regenerating the spec would drop it "
                       "and %s." % (" and ".join(named), "leave CUDA in containers without Unified Memory"
                                    if set(named) & set(UVM_NODES) else "the graphics it serves"),
                remedy=on_demand_nodes_fix(uvm=bool(set(named) & set(UVM_NODES)),
                                           modeset="/dev/nvidia-modeset" in named),
                evidence={"spec": spec["path"], "missing": named}))
        elif "/dev/nvidia-uvm" not in spec["device_nodes"]:
            out.append(finding(
                ERROR, "%s gives containers no /dev/nvidia-uvm: CUDA in them cannot start" % spec["path"],
                detail="The spec was generated while /dev/nvidia-uvm did not exist (the driver makes it on demand); "
                       "containers then get the GPUs' nodes but not Unified Memory's, and cuInit fails with "
                       "CUDA_ERROR_UNKNOWN (999), 'CUDA unknown error' in PyTorch.",
                remedy=on_demand_nodes_fix(uvm="/dev/nvidia-uvm" not in live, modeset=False, regenerate=True),
                evidence={"spec": spec["path"], "device_nodes": spec["device_nodes"]}))
    return out
