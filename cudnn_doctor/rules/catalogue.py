"""Failure-catalogue checks seen from files, NVML and the environment: A5 A6 E5 G3 G5 G6 G8 H2 H3 I2 I3."""
from __future__ import annotations

import re
from typing import Dict, List

from ..versions import major_of, mm_at_least
from ..model import Facts, Finding
from . import RuleContext, rule
from ..queries import (built_cuda_major, driver_cuda, driver_version, framework_label, in_environment_of, platform_of,
                       site_wheels, visible_gpus)
from ..remedies import driver_or_older_image_fix, machine_cudnn_fix, onnxruntime_cuda_fix
from ..remedies.catalogue import (dev_char_links_fix, fabric_manager_fix, local_repo_fix, paddle_copy_fix, paddle_wheel_fix,
                                 one_cupy_fix, reboot_and_hold_fix, tensorflow_libraries_fix, uvm_fix,
                                 workspace_limit_fix)
from ..knowledge.sonames import cuda_library_projects
from ..remedies.environments import missing_pins, whole_environment_fix
from .common import ERROR, INFO, WARNING, compat_of, finding


@rule("CD108", "nvidia-uvm-missing", "The nvidia_uvm module or its device node is missing", section="driver")
def nvidia_uvm(facts: Facts, ctx: RuleContext) -> List[Finding]:
    d = facts.driver
    if not d.kernel_module_loaded or facts.host.wsl or facts.host.in_container and not facts.host.dev_nodes:
        return []  # no driver (CD101/CD102 speak), WSL has no UVM node, a GPU-less container is CD801's
    state = facts.machine_state
    # Without /proc/modules (unreadable, or a --root without it) the module list says nothing: judge the node only.
    uvm_loaded = ("nvidia_uvm" in d.loaded_modules) if d.modules_listed else None
    node = "/dev/nvidia-uvm" in facts.host.dev_nodes
    modprobe = state.get("nvidia_modprobe")
    if uvm_loaded is not False and node:
        return []
    if uvm_loaded is False and modprobe and not facts.host.in_container:
        return [finding(
            INFO, "nvidia_uvm is not loaded yet",
            detail="nvidia-modprobe loads it and creates /dev/nvidia-uvm the first time a CUDA program starts; if "
                   "CUDA then fails with 'CUDA unknown error' / cuInit 999, the module is broken (often after "
                   "suspend/resume).",
            evidence={"loaded_modules": d.loaded_modules}, catalogue=["A5"])]
    fix = uvm_fix(bool(modprobe), bool(facts.host.in_container))
    missing = [x for x, ok in (("the nvidia_uvm module", uvm_loaded is not False), ("/dev/nvidia-uvm", node))
               if not ok]
    return [finding(
        ERROR, "CUDA cannot initialise: %s %s missing" % (" and ".join(missing),
                                                                  "is" if len(missing) == 1 else "are"),
        detail="CUDA's Unified Memory module backs every CUDA context: without it cuInit fails with "
               "CUDA_ERROR_UNKNOWN (999), 'CUDA unknown error' in PyTorch, 'cuda driver library init failure: 999'.",
        remedy=fix, evidence={"loaded_modules": d.loaded_modules, "dev_nodes": facts.host.dev_nodes},
        catalogue=["A5"])]


@rule("CD109", "nvswitch-without-fabric-manager", "NVSwitch system without a matching Fabric Manager", section="driver")
def fabric_manager(facts: Facts, ctx: RuleContext) -> List[Finding]:
    state = facts.machine_state
    switches = state.get("nvswitches") or []
    fm = state.get("fabric_manager") or {}
    driver = driver_version(facts)
    if not switches or not driver or facts.host.in_container:
        return []
    branch = driver.split(".")[0]
    packages: Dict[str, str] = fm.get("packages") or {}
    problem, fix = None, fabric_manager_fix(branch, driver, installed=False)
    if not packages and not fm.get("binary"):
        problem = "no nvidia-fabricmanager is installed"
    else:
        wrong = {p: v for p, v in packages.items() if not v.startswith(driver)}
        if wrong:
            problem = "nvidia-fabricmanager %s does not match driver %s" % (
                ", ".join("%s %s" % kv for kv in sorted(wrong.items())), driver)
        elif not fm.get("enabled"):
            problem = "the nvidia-fabricmanager service is not enabled"
            fix = fabric_manager_fix(branch, driver, installed=True)
    if problem is None:
        return []
    return [finding(
        ERROR, "This machine has %d NVSwitch device%s but %s" % (len(switches), "" if len(switches) == 1
                                                                          else "s", problem),
        detail="On HGX/DGX boards CUDA does not initialise until Fabric Manager (exactly the driver's version) has "
               "configured the NVLink fabric: 'Error 802: system not yet initialized' (cudaErrorSystemNotReady).",
        remedy=fix, evidence={"nvswitches": switches[:8], "fabric_manager": fm, "driver": driver}, catalogue=["A6"])]


@rule("CD208", "conv-workspace-may-not-fit", "Small GPU: fastest convolution algorithms may not fit", section="gpus")
def workspace_hint(facts: Facts, ctx: RuleContext) -> List[Finding]:
    table = compat_of(ctx).workspace_advice()
    small = int(table["small_gpu_mib"])
    users = [fw.name for fw in facts.python.frameworks if fw.cuda_build] + (
        ["deeplearning4j"] if facts.java.nd4j_backends or facts.java.javacpp_presets else [])
    out: List[Finding] = []
    for gpu in visible_gpus(facts):
        if not users or not gpu.memory_total_mib or gpu.memory_total_mib >= small:
            continue
        out.append(finding(
            INFO, "GPU %d has %d MiB: the fastest convolution algorithms may not fit" % (
                gpu.index, gpu.memory_total_mib),
            detail="cuDNN's fastest algorithms (FFT, Winograd) can ask for workspaces of several GB; on a small GPU "
                   "they fail as OutOfMemoryError / CUDNN_STATUS_EXECUTION_FAILED at some batch sizes only. Only "
                   "running the model shows it: `cudnn-doctor explain` routes the error text [%s]." % table["source"],
            remedy=workspace_limit_fix(table["paddle_default_limit_mb"]),
            evidence={"gpu": gpu.index, "total_mib": gpu.memory_total_mib, "frameworks": users}, catalogue=["E5"]))
    return out


@rule("CD706", "framework-cuda-libraries-missing", "A framework's CUDA libraries cannot be found", section="python")
def framework_libraries(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    since = compat.tensorflow_pip_cuda_since()
    for label, libs in sorted((facts.machine_state.get("framework_libraries") or {}).items()):
        # cuDNN has its own finding (CD704, with the framework's own pin); this one names the other CUDA libraries.
        missing = sorted(n for n, path in libs.items() if path is None and not n.startswith("libcudnn"))
        if not missing:
            continue
        name, version = label.split(" ", 1)
        tf = name.startswith(("tensorflow", "tf-nightly"))
        fw = next((f for f in facts.python.frameworks if "%s %s" % (f.name, f.version) == label), None)
        if tf:
            cuda = major_of(fw.cuda_version) if fw is not None else None
            pip_ok = bool(mm_at_least(version.split("+")[0], since))
            pins = missing_pins(facts, fw, cuda_library_projects(compat, cuda)) if pip_ok and fw and cuda else []
            fix = tensorflow_libraries_fix(version, missing, pins, pip_ok)
        else:
            site = fw.location if fw is not None else None
            fix = onnxruntime_cuda_fix(compat, version, site, missing, site_releases=site_wheels(facts, site))
        if fw is not None:
            fix = whole_environment_fix(facts, compat, fw, fix)
        out.append(finding(
            ERROR, "%s cannot load %d CUDA librar%s: %s" % (label, len(missing),
                                                                 "y" if len(missing) == 1 else "ies", ", ".join(missing)),
            detail=("TensorFlow prints only 'Cannot dlopen some GPU libraries ... Skipping registering GPU devices' "
                    "and runs on the CPU." if tf else
                    "ONNX Runtime logs 'Failed to load library libonnxruntime_providers_cuda.so' and silently falls "
                    "back to the CPU execution provider.") +
                   " Each name was looked up as ld.so would (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default "
                   "folders) and found nowhere.",
            remedy=fix, evidence={"framework": label, "libraries": libs}, catalogue=["G3"] if tf else ["G6"]))
    return out


@rule("CD707", "paddle-cudnn-not-on-path", "PaddlePaddle cannot dlopen its cuDNN", section="python")
def paddle(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        if not fw.name.startswith("paddlepaddle") or not fw.cuda_build or not fw.cudnn_version:
            continue
        major = major_of(fw.cudnn_version)
        if major is None:
            continue
        # The name its own dlopen asks for, searched from its library (the probe's), else the plain soname.
        name = fw.resolved_cudnn.name if fw.resolved_cudnn is not None else "libcudnn.so.%s" % major
        res = fw.resolved_cudnn or facts.loader.resolved.get(name)
        if res is not None and res.path and not res.error:
            continue
        # A copy of its major built for its own CUDA (a cu12 wheel beside Paddle for CUDA 11 loads, then fails).
        cuda = major_of(fw.cuda_version)
        # Only one in its own environment: a link in another folder is no change fix can make or undo there, and
        # that folder is not the environment's to change (draw 291129-39: a preloaded tarball folder).
        elsewhere = [c for c in facts.cudnn if c.major == major and built_cuda_major(c) in (None, cuda)
                     and in_environment_of(fw.location, c.directory)]
        fix = whole_environment_fix(facts, compat, fw, paddle_copy_fix(facts, compat, fw, elsewhere[0], name, major)
                                    if elsewhere else paddle_wheel_fix(facts, compat, fw, name, major))
        out.append(finding(
            ERROR, "%s needs cuDNN %s, which no plain search path provides" % (
                framework_label(facts, fw), fw.cudnn_version),
            detail="Paddle dlopens cuDNN by name at run time (not through DT_NEEDED), so only LD_LIBRARY_PATH, the "
                   "loader cache and the default folders count: 'Cannot load cudnn shared library. Cannot invoke "
                   "method cudnnGetVersion'.%s" % (" A copy exists at %s." % elsewhere[0].directory if elsewhere else ""),
            remedy=fix, evidence={"framework": fw.name, "cudnn": fw.cudnn_version, "soname": name}, catalogue=["G5"]))
    return out


@rule("CD708", "cupy-installed-twice", "More than one CuPy package in one environment", section="python")
def cupy_twice(facts: Facts, ctx: RuleContext) -> List[Finding]:
    by_site: Dict[str, List[str]] = {}
    for fw in facts.python.frameworks:
        if fw.name.lower().startswith("cupy"):
            by_site.setdefault(fw.location, []).append(fw.name)
    out: List[Finding] = []
    for site, names in sorted(by_site.items()):
        if len(names) < 2:
            continue
        cuda = driver_cuda(facts, compat_of(ctx))
        wheel = "cupy-cuda%sx" % major_of(cuda) if cuda else sorted(names)[-1]
        out.append(finding(
            ERROR, "%d CuPy packages share %s: %s" % (len(names), site, ", ".join(sorted(names))),
            detail="They install into the same cupy/ folder and overwrite each other's files: 'module cupy.cuda has "
                   "no attribute cudnn', missing cupy.cudnn, or a CuPy built for another CUDA.",
            remedy=one_cupy_fix(names, wheel),
            evidence={"site": site, "packages": names}, catalogue=["G8"]))
    return out


@rule("CD805", "image-needs-newer-cuda", "The container image requires a newer CUDA than the host driver",
      section="driver")
def image_requirement(facts: Facts, ctx: RuleContext) -> List[Finding]:
    req = facts.machine_state.get("require_cuda")
    if not req:
        return []
    m = re.search(r"cuda>=\s*(\d+\.\d+)", req["value"])
    have = driver_cuda(facts, compat_of(ctx))
    if not m or not have or mm_at_least(have, m.group(1)):
        return []
    return [finding(
        ERROR, "The image needs CUDA %s but the host driver %s supports CUDA %s" % (
            m.group(1), driver_version(facts) or "", have),
        detail="NVIDIA_REQUIRE_CUDA=%s (%s): nvidia-container-cli refuses to start it with 'unsatisfied condition: "
               "cuda>=%s, please update your driver'." % (req["value"], req["source"], m.group(1)),
        remedy=driver_or_older_image_fix(m.group(1), have, platform_of(facts)),
        evidence={"NVIDIA_REQUIRE_CUDA": req["value"], "driver_cuda": have}, catalogue=["H2"])]


@rule("CD806", "dev-char-links-missing", "NVIDIA device nodes lack /dev/char links (containers lose the GPU)",
      section="driver")
def dev_char(facts: Facts, ctx: RuleContext) -> List[Finding]:
    dev = facts.machine_state.get("devices") or {}
    if facts.host.in_container or not dev.get("container_toolkit") or not dev.get("docker") or \
            not dev.get("systemd_cgroup") or not dev.get("dev_char") or dev.get("nvidia_links"):
        return []
    if not any(n.startswith("/dev/nvidia") for n in facts.host.dev_nodes):
        return []
    ctk = dev.get("nvidia_ctk")
    return [finding(
        WARNING, "/dev/char has no links to the NVIDIA device nodes",
        detail="With the systemd cgroup driver, `systemctl daemon-reload` re-applies device rules and drops access "
               "to device nodes /dev/char does not name: running containers then fail with 'Failed to initialize "
               "NVML: Unknown Error' until restarted.",
        remedy=dev_char_links_fix(ctk),
        evidence=dev, catalogue=["H3"])]


@rule("CD902", "cudnn-local-repo-not-installed", "cuDNN local repository registered but nothing installed from it",
      section="policy")
def local_repo(facts: Facts, ctx: RuleContext) -> List[Finding]:
    state = facts.machine_state
    if state.get("cudnn_packages"):
        return []
    out: List[Finding] = []
    for repo in state.get("cudnn_local_repos") or []:
        packages = [p for p in repo["packages"] if re.match(r"^(lib)?cudnn\d*(-dev)?(-cuda-\d+)?$", p)] or \
            [p for p in repo["packages"] if "sample" not in p and "doc" not in p]
        if not packages:
            continue
        out.append(finding(
            ERROR, "%s is registered but no cuDNN package is installed from it" % repo["repo"],
            detail="The cudnn-local-repo .deb only adds an apt source and its key; the libraries come from installing "
                   "the packages it holds.",
            remedy=local_repo_fix(repo, packages), evidence=repo, catalogue=["I2"]))
    return out


@rule("CD903", "driver-upgraded-since-boot", "Driver packages were upgraded after the last boot", section="policy")
def driver_upgraded(facts: Facts, ctx: RuleContext) -> List[Finding]:
    upgrades = facts.machine_state.get("driver_upgrades_since_boot") or []
    if not upgrades or facts.host.in_container:
        return []
    last = upgrades[-1]
    packages = sorted({p for u in upgrades for p in u["packages"]})
    return [finding(
        WARNING, "apt upgraded NVIDIA driver packages on %s, after this machine booted" % last["date"],
        detail="The running kernel module stays at the old version until a reboot, while new programs load the new "
               "libraries: 'Failed to initialize NVML: Driver/library version mismatch' (unattended-upgrades, or the "
               "`cuda` meta-package pulling a new driver).",
        remedy=reboot_and_hold_fix(packages),
        evidence={"upgrades": upgrades}, catalogue=["I3", "A4"])]
