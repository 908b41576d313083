"""CD81x: a container image (check --image) as the NVIDIA runtime will treat it, alone or on a node (--against)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ..model import Facts, Finding
from ..queries import driver_cuda, driver_version, primary_toolkit, visible_gpus
from ..readers.nvidia_require import NodeValues, judge_brands
from ..remedies.containers import (capabilities_fix, compat_older_fix, forward_compat_gpu_fix, image_on_node_fix,
                                   invalid_requirement_fix, legacy_cuda_version_fix, node_report_again_fix,
                                   product_brand_fix, visible_devices_fix)
from ..versions import mm_before, ver, version_key
from . import RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding

if TYPE_CHECKING:
    from ..model_image import ImageFacts

# Checks that judge the node's own driver and GPUs: an image alone leaves them to the node ("to be judged on the
# node"); against a node, the CD1xx driver checks stay with that node's own report (the runtime mounts its driver).
NODE_CHECKS = ("CD1*", "CD2*", "CD301", "CD302", "CD303", "CD305", "CD502", "CD605", "CD801", "CD804", "CD805",
               "CD806", "CD903")
NODE_OWN_CHECKS = ("CD1*", "CD603", "CD801", "CD805", "CD806", "CD903")


def image_cuda(facts: Facts) -> Optional[str]:
    """The CUDA the image is built for: its /usr/local/cuda toolkit, else CUDA_VERSION from its config."""
    tk = primary_toolkit(facts)
    if tk and tk.version:
        return tk.version
    return (facts.image.env.get("CUDA_VERSION") if facts.image else None) or None


def _on(img: ImageFacts) -> str:
    return "on %s" % img.node


def _needs_cuda(facts: Facts) -> bool:
    return bool(facts.toolkits or facts.cudnn or any(f.cuda_build for f in facts.python.frameworks))


@rule("CD810", "image-node-pending", "Driver and GPU checks of an image wait for a node", section="driver")
def node_pending(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None or img.node is not None:
        return []
    return [finding(
        INFO, "The driver and GPU checks are to be judged on the node (%d layers read)" % len(img.layers),
        detail="An image carries no driver and no GPU: the runtime mounts the node's. Judge it against a node's "
               "saved report with `cudnn-doctor check --image %s --against NODE.json`, or against every node with "
               "`cudnn-doctor fleet REPORTS --image %s`." % (img.reference, img.reference),
        evidence={"image": img.reference, "digest": img.digest, "requirements": img.requirements})]


@rule("CD811", "image-runtime-refuses", "The NVIDIA container runtime refuses the image on the node", section="driver")
def runtime_refuses(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None:
        return []
    compat = compat_of(ctx)
    evidence: Dict[str, Any] = {"requirements": img.requirements, "node": img.node, "source": compat.runtime_source()}
    if img.requirement_error:
        return [finding(
            ERROR,
            "The NVIDIA Container Toolkit cannot read the image's requirement: %s" % img.requirement_error,
            detail="CUDA_VERSION without NVIDIA_REQUIRE_CUDA makes a legacy image, whose CUDA_VERSION must be a "
                   "version; the container is not created on any node.",
            remedy=legacy_cuda_version_fix(),
            evidence=evidence)]
    if not img.requirements:
        return []
    if img.node is None:
        return [finding(
            INFO, "nvidia-container-cli will require %s" % " and ".join(img.requirements),
            detail="Judged on each node against its driver and GPUs before the container starts (--against).",
            evidence=evidence)]
    cuda, driver = driver_cuda(facts, compat), driver_version(facts)
    gpus = [NodeValues(cuda, driver, g.compute_capability, None) for g in visible_gpus(facts)]
    brands = compat.runtime_brands_for({g.name for g in visible_gpus(facts)})
    verdict = judge_brands(img.requirements, gpus, NodeValues(cuda, driver, gpu=False), brands)
    evidence.update(driver=driver, driver_cuda=cuda, gpus=[g.arch for g in gpus])
    outcome = verdict.outcome
    if outcome is not None and outcome.ok:
        return [finding(INFO, "The runtime accepts the image %s (driver %s, CUDA %s)" % (
            _on(img), driver or "?", cuda or "?"), evidence=evidence)]
    if outcome is not None:
        evidence["refused_by"] = outcome.requirement
        want = image_cuda(facts)
        floor = compat.min_driver(want) if want else None
        fix = (invalid_requirement_fix(outcome.requirement) if outcome.invalid else
               image_on_node_fix(img.node, floor, want, cuda))
        return [finding(
            ERROR, "The runtime refuses the image %s: %s%s" % (
                _on(img), compat.refusal_prefix(), outcome.message),
            detail="NVIDIA_REQUIRE_* %r judged against driver %s (CUDA %s) and %d GPU(s), as libnvidia-container "
                   "does: the container is never created." % (outcome.requirement, driver or "?", cuda or "?",
                                                                 len(gpus)),
            remedy=fix, evidence=evidence, catalogue=["H2"])]
    if verdict.refused_brands:
        evidence["refused_brands"] = list(verdict.refused_brands)
        return [finding(
            WARNING, "The runtime refuses the image %s if its GPUs' brand reads as %s" % (
                _on(img), " or ".join(verdict.refused_brands)),
            detail="The requirement names GPU brands; a node report records the GPU's name but not the NVML brand "
                   "the runtime compares (%s), so both answers are possible." % ", ".join(brands),
            remedy=product_brand_fix(),
            evidence=evidence, catalogue=["H2"])]
    return [finding(
        WARNING, "Cannot judge the image's requirement %s: the node report lacks the driver's %s" % (
            _on(img), verdict.unknown),
        remedy=node_report_again_fix(),
        evidence=evidence)]


@rule("CD812", "image-requirements-disabled", "The image turns the runtime's requirement check off", section="driver")
def requirements_disabled(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None or not img.disable_require:
        return []
    compat = compat_of(ctx)
    want, have = image_cuda(facts), driver_cuda(facts, compat)
    evidence = {"NVIDIA_DISABLE_REQUIRE": img.env.get("NVIDIA_DISABLE_REQUIRE"), "image_cuda": want,
                "driver_cuda": have, "node": img.node}
    short = img.node is not None and mm_before(have, want)
    if not short or want is None:
        return [finding(INFO, "NVIDIA_DISABLE_REQUIRE=%s: the runtime starts the image without checking its "
                                       "requirements" % img.env.get("NVIDIA_DISABLE_REQUIRE"), evidence=evidence)]
    floor = compat.min_driver(want)
    return [finding(
        WARNING, "The image turns the runtime's check off, and its CUDA %s is newer than the CUDA %s the "
                          "driver %s %s runs" % (want, have, driver_version(facts) or "?", _on(img)),
        detail="The container starts, and its first CUDA call fails ('CUDA driver version is insufficient') unless "
               "forward compatibility works there (CD813).",
        remedy=image_on_node_fix(img.node, floor, want, have),
        evidence=evidence, catalogue=["H2"])]


@rule("CD813", "image-forward-compat", "The image's cuda-compat libcuda on the node's GPUs", section="driver")
def forward_compat(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None or img.node is None or not img.compat_libcuda:
        return []
    compat = compat_of(ctx)
    rule_facts = compat.forward_compat_rule()
    want, have, driver = image_cuda(facts), driver_cuda(facts, compat), driver_version(facts)
    newest = max(img.compat_libcuda, key=lambda c: version_key(c["version"]))
    evidence = {"compat_libcuda": img.compat_libcuda, "driver": driver, "image_cuda": want, "driver_cuda": have,
                "source": rule_facts.get("source")}
    libcuda, running = ver(newest["version"]), ver(driver)
    if libcuda is not None and running is not None and libcuda <= running:
        return [finding(
            WARNING, "The image's cuda-compat libcuda %s is not newer than driver %s %s" % (
                newest["version"], driver, _on(img)),
            detail="Loaded there it fails with %s [%s]; it is only wanted on older drivers." % (
                rule_facts.get("error_older_than_driver"), rule_facts.get("source")),
            remedy=compat_older_fix(), evidence=evidence, catalogue=["C2"])]
    if want is None or not mm_before(have, want):
        return []
    floor = compat.min_driver(want)
    out: List[Finding] = []
    for gpu in visible_gpus(facts)[:1]:  # a node's GPUs share a model
        works = compat.forward_compat_gpu(gpu.name)
        label = "%s (%s)" % (img.node, gpu.name)
        if works is False:
            out.append(finding(
                ERROR, "CUDA %s needs forward compatibility on %s, which its GPUs do not support" % (
                    want, label),
                detail="The image's cuda-compat libcuda %s works only on %s; here CUDA fails with %s [%s]." % (
                    newest["version"], ", ".join(rule_facts.get("supported_gpus", [])),
                    rule_facts.get("error_unsupported_gpu"), rule_facts.get("source")),
                remedy=forward_compat_gpu_fix(img.node, floor, want),
                evidence=evidence, catalogue=["C2"]))
        elif works is None:
            out.append(finding(
                WARNING, "CUDA %s needs forward compatibility on %s; cannot tell whether its GPU supports it"
                % (want, label), detail="It works only on %s [%s]." % (
                    ", ".join(rule_facts.get("supported_gpus", [])), rule_facts.get("source")),
                remedy=forward_compat_gpu_fix(img.node, floor, want),
                evidence=evidence, catalogue=["C2"]))
        else:
            out.append(finding(
                INFO, "CUDA %s runs %s through the image's cuda-compat libcuda %s (forward compatibility)"
                % (want, label, newest["version"]), evidence=evidence, catalogue=["C2"]))
    return out


@rule("CD814", "image-driver-capabilities", "The image does not ask the runtime for the compute libraries",
      section="driver")
def driver_capabilities(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None:
        return []
    compat = compat_of(ctx)
    value = img.env.get("NVIDIA_DRIVER_CAPABILITIES")
    mounted, unknown = compat.driver_capabilities(value)
    evidence = {"NVIDIA_DRIVER_CAPABILITIES": value, "mounted": mounted, "source": compat.capabilities_source()}
    out: List[Finding] = []
    missing = [c for c in compat.cuda_capabilities() if c not in mounted]
    if missing and _needs_cuda(facts):
        out.append(finding(
            ERROR, "NVIDIA_DRIVER_CAPABILITIES=%s leaves out %s: the runtime mounts no libcuda" % (
                value, ", ".join(missing)),
            detail="The image holds CUDA libraries, but without the %s capability the driver's libcuda.so.1 is not "
                   "mounted into the container: CUDA finds no driver." % ", ".join(missing),
            remedy=capabilities_fix(missing[0]), evidence=evidence, catalogue=["H1"]))
    if unknown:
        out.append(finding(
            WARNING, "NVIDIA_DRIVER_CAPABILITIES names capabilities the runtime does not know: %s" %
                              ", ".join(unknown),
            remedy=capabilities_fix("compute"), evidence=evidence))
    return out


@rule("CD815", "image-no-gpu", "The image asks for no GPU", section="driver")
def no_gpu(facts: Facts, ctx: RuleContext) -> List[Finding]:
    img = facts.image
    if img is None:
        return []
    value = img.env.get("NVIDIA_VISIBLE_DEVICES")
    if not compat_of(ctx).no_gpu_devices(value) or not _needs_cuda(facts):
        return []
    return [finding(
        WARNING, "NVIDIA_VISIBLE_DEVICES=%r in the image gives the container no GPU" % value,
        detail="Unless the run asks for GPUs itself (--gpus, a device plugin), the runtime mounts no device and no "
               "driver: CUDA finds no GPU.", remedy=visible_devices_fix(), evidence={"NVIDIA_VISIBLE_DEVICES": value},
        catalogue=["H1"])]
