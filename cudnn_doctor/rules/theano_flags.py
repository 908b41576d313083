"""CD763-CD765: Theano flags a release refuses or ignores (device=gpu, lib.cnmem, dnn.enabled) and configuration
files Theano cannot read (compat/theano.toml, read from the releases' own source)."""
from __future__ import annotations

from typing import Dict, List, Optional

from ..model import Facts, Finding
from ..remedies import theano_device_fix, theano_setting_fix
from ..remedies.theano import theano_config_syntax_fix
from . import RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding
from .theano import CATALOGUE, backend_of, setting_source, setting_value


@rule("CD763", "theano-old-gpu-backend", "device=gpu: Theano's old CUDA back-end, deprecated in 0.9, gone in 1.0",
      section="python")
def theano_old_backend(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    text = compat.theano_config().get("old_backend_text", "")
    guide = compat.theano_config().get("old_backend_guide", "")
    out: List[Finding] = []
    for key in ("device", "init_gpu_device"):
        device = setting_value(facts, key).strip()
        if not device.startswith("gpu"):
            continue
        for inst in facts.theano.installs:
            state = (compat.theano_release(inst.version) or {}).get("device_gpu")
            if state not in ("removed", "deprecated"):
                continue
            removed = state == "removed"
            out.append(finding(
                ERROR if removed else WARNING,
                "Theano %s: %s=%s (from %s) %s" % (
                    inst.version, key, device, setting_source(facts, key),
                    "is refused: '%s'" % text if removed else "uses the old CUDA back-end, deprecated in 0.9 and "
                                                             "removed in 1.0"),
                detail="The old back-end (theano.sandbox.cuda) was removed in Theano 1.0; the gpuarray back-end "
                       "takes device=cuda*. Converting: %s" % guide,
                remedy=theano_device_fix(facts.theano, key, device),
                evidence={"setting": key, "value": device, "source": compat.theano_source("releases")},
                catalogue=CATALOGUE))
    return out


@rule("CD764", "theano-cnmem-ignored", "lib.cnmem only configures the old CUDA back-end", section="python")
def theano_cnmem(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    cnmem = facts.theano.settings.get("lib.cnmem")
    backend, device = backend_of(facts)
    if not cnmem:
        return out
    preallocate = facts.theano.settings.get("gpuarray.preallocate")
    for inst in facts.theano.installs:
        known = (compat.theano_release(inst.version) or {}).get("lib_cnmem")
        if known is None or (known and backend != "gpuarray"):
            continue
        if preallocate and cnmem["from"] != "THEANO_FLAGS":  # moved over already; the file's line is inert
            out.append(finding(INFO, "lib.cnmem=%s (from %s) is not read; gpuarray.preallocate=%s is" % (
                cnmem["value"], cnmem["from"], preallocate["value"]), catalogue=CATALOGUE))
            continue
        why = ("Theano %s has no lib.cnmem flag%s" % (inst.version, " ('%s')" % (
            compat.theano_config().get("unknown_flag_text", "%s") % "lib.cnmem") if cnmem["from"] == "THEANO_FLAGS"
            else "") if not known else "device=%s is the gpuarray back-end, which does not read lib.cnmem" % device)
        value = cnmem["value"].strip()
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        changes: Dict[str, Optional[str]] = {"lib.cnmem": None}
        if number > 0 and number != 1:  # same meaning in both: a fraction of the memory below 1, MB above it
            changes["gpuarray.preallocate"] = value
        out.append(finding(
            WARNING, "lib.cnmem=%s (from %s) is ignored: %s" % (value, cnmem["from"], why),
            detail="CNMeM was the old back-end's memory pool; the gpuarray back-end preallocates with "
                   "gpuarray.preallocate (a fraction of GPU memory below 1, megabytes from 1 up).",
            remedy=theano_setting_fix(facts.theano, changes), evidence={"value": value, "from": cnmem["from"],
                                                                     "source": compat.theano_source("releases")},
            catalogue=CATALOGUE))
    return out


@rule("CD765", "theano-config-unreadable", "Theano cannot read its configuration: `import theano` fails",
      section="python")
def theano_config_unreadable(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.theano.installs:
        return []
    compat = compat_of(ctx)
    out = [finding(ERROR, "Theano cannot read its configuration: %s" % problem,
                   detail="Theano parses THEANO_FLAGS and every .theanorc when it is imported; a file Python's "
                          "configparser rejects, or an unbalanced quote in THEANO_FLAGS, stops the import.",
                   remedy=theano_config_syntax_fix(problem),
                   evidence={"problem": problem}, catalogue=CATALOGUE)
           for problem in facts.theano.problems]
    enabled = facts.theano.settings.get("dnn.enabled")
    for inst in facts.theano.installs:
        allowed = (compat.theano_release(inst.version) or {}).get("dnn_enabled")
        if enabled and allowed and enabled["value"] not in allowed:
            # Theano filters every value the user gave when it registers the flag, at import.
            out.append(finding(
                ERROR, "Theano %s: dnn.enabled=%s (from %s) is not one of %s: `import theano` fails with "
                "'Invalid value (\"%s\") for configuration variable \"dnn.enabled\"'" % (
                    inst.version, enabled["value"], enabled["from"], ", ".join(allowed), enabled["value"]),
                detail="dnn.enabled takes auto (use cuDNN when it works), True (fail without it) or False; "
                       "no_check exists from Theano 1.0 on. Source: %s" % compat.theano_source("releases"),
                remedy=theano_setting_fix(facts.theano, {"dnn.enabled": "auto"}),
                evidence={"value": enabled["value"], "from": enabled["from"]}, catalogue=CATALOGUE))
    return out
