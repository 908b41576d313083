"""Whether one cuDNN build can be used with one CUDA toolkit, with the reason (compat/cudnn.toml)."""
from __future__ import annotations

from typing import Optional, Tuple

from ..versions import cuda_label, major_of, mm, mm_of, release3
from .cudnn import CudnnKnowledge
from .driver import DriverKnowledge
from .tables import Domain, Tables


class CudnnFitKnowledge(Domain):
    """The cuDNN-build-against-toolkit verdict, which reads both the build rows and minor-version compatibility."""

    def __init__(self, tables: Tables, cudnn: CudnnKnowledge, drivers: DriverKnowledge) -> None:
        super().__init__(tables)
        self.cudnn = cudnn
        self.drivers = drivers

    def cudnn_cuda_verdict(self, cudnn_version: str, built_for_cuda: Optional[str],
                           toolkit_cuda: str) -> Tuple[Optional[bool], str]:
        """Can this cuDNN build be used with that CUDA toolkit? (True / False / None = cannot tell, why)."""
        release = release3(cudnn_version)
        tk = mm(toolkit_cuda)
        tk_major = major_of(toolkit_cuda)
        if release is None:
            return None, "Cannot tell: the cuDNN version %r is not understood." % cudnn_version
        if tk_major is None:
            return None, "Cannot tell: the toolkit version %r is not understood." % toolkit_cuda
        tk_text = "%d.%d" % tk if tk else str(tk_major)
        label = cuda_label(built_for_cuda)
        built_major = major_of(label) if label else None
        builds = self.cudnn.cudnn_builds(str(release))
        if label and built_major is not None:
            matching = [b for b in builds if self.cudnn.build_matches(b, label)]
            if matching:
                b = matching[0]
                src = "%s [%s]" % (b.source, b.status)
                if tk and "%d.%d" % tk in b.cuda:
                    return True, ("cuDNN %s's %s build supports CUDA %s (%s)." % (release, b.variant, tk_text, src))
                if tk_major == b.cuda_major and tk and b.family and tk < min(mm_of(c) for c in b.cuda):
                    return False, ("cuDNN %s's %s build lists CUDA %s; %s is older than every CUDA it lists "
                                   "(%s)." % (release, b.variant, b.cuda_text(), tk_text, src))
                if tk_major != b.cuda_major:
                    return False, ("cuDNN %s built for CUDA %s needs a CUDA %d.x toolkit, not %s; install the "
                                   "build for CUDA %d (%s)." % (release, label, built_major, tk_text, tk_major, src))
                if self.drivers.has_minor_compat(tk_major) and (b.family or release >= self.cudnn.family_since()):
                    return True, ("cuDNN %s's %s build lists CUDA %s; %s runs through CUDA minor-version "
                                  "compatibility (%s)." % (release, b.variant, b.cuda_text(), tk_text, src))
                if self.drivers.has_minor_compat(tk_major):
                    return None, ("Cannot tell: cuDNN %s's %s build lists CUDA %s, not %s (%s)."
                                  % (release, b.variant, b.cuda_text(), tk_text, src))
                return False, ("cuDNN %s built for CUDA %s does not work with CUDA %s: before CUDA %s every "
                               "minor release has its own runtime soname (%s)." % (release, label, tk_text,
                                                                                  self.cudnn.mvc_first(), src))
            if builds:
                listed = ", ".join(sorted({b.variant for b in builds}))
                if built_major != tk_major:
                    return False, ("cuDNN %s built for CUDA %s cannot be used with CUDA %s (major differs); "
                                   "builds listed: %s (%s)." % (release, label, tk_text, listed, builds[0].source))
            # No row names this build: judge by the major only.
            if built_major != tk_major:
                return False, ("cuDNN %s built for CUDA %s cannot be used with CUDA %s: the CUDA major differs "
                               "(%s)." % (release, label, tk_text, self.cudnn.family_source()))
            if self.drivers.has_minor_compat(tk_major) and release >= self.cudnn.family_since():
                return True, ("cuDNN %s built for CUDA %s fits CUDA %s: from %s NVIDIA ships one build per CUDA "
                              "major for all its minors (%s) [no support-matrix row for %s in compat]."
                              % (release, label, tk_text, self.cudnn.family_since(), self.cudnn.family_source(),
                                 release))
            if not self.drivers.has_minor_compat(tk_major) and tk and mm(label) == tk:
                return True, ("cuDNN %s built for CUDA %s matches the toolkit %s exactly [no support-matrix row "
                              "for %s in compat]." % (release, label, tk_text, release))
            if not self.drivers.has_minor_compat(tk_major) and tk and mm(label) and mm(label) != tk:
                return False, ("cuDNN %s built for CUDA %s does not work with CUDA %s: before CUDA %s every minor "
                               "release has its own runtime soname." % (release, label, tk_text,
                                                                          self.cudnn.mvc_first()))
            return None, ("Cannot tell whether cuDNN %s built for CUDA %s works with CUDA %s: compat has no row "
                          "for it." % (release, label, tk_text))
        # The build is not known: is there any build of this release for the toolkit?
        if not builds:
            eras = self.cudnn.cudnn_requirements(str(release)).get("likely_variants", [])
            era = next((e for e in eras if e["variant"] == "cuda%d" % tk_major), None)
            if era and self.drivers.has_minor_compat(tk_major):
                return True, ("cuDNN %s most likely has a %s build (%s) [%s: no support-matrix row for %s]; make "
                              "sure that build is the one installed." % (release, era["variant"], era["source"],
                                                                         era["status"], release))
            return None, ("Cannot tell: compat has no support-matrix row for cuDNN %s and the CUDA it was built "
                          "for is unknown." % release)
        fitting = [b for b in builds if tk and "%d.%d" % tk in b.cuda]
        if fitting:
            b = fitting[0]
            return True, ("cuDNN %s has a %s build for CUDA %s (%s [%s]); make sure that build is the one "
                          "installed." % (release, b.variant, tk_text, b.source, b.status))
        same_major = [b for b in builds
                      if b.cuda_major == tk_major and self.drivers.has_minor_compat(tk_major) and b.family]
        if same_major:
            b = same_major[0]
            return True, ("cuDNN %s's %s build (CUDA %s) covers CUDA %s through minor-version compatibility "
                          "(%s [%s])." % (release, b.variant, b.cuda_text(), tk_text, b.source, b.status))
        listed = ", ".join("%s (CUDA %s)" % (b.variant, b.cuda_text()) for b in builds)
        return False, ("cuDNN %s has no build for CUDA %s; its builds: %s (%s)."
                       % (release, tk_text, listed, builds[0].source))
