"""JavaCPP presets and ND4J CUDA backends in Maven/Gradle caches (Deeplearning4j users, catalogue G7)."""
from __future__ import annotations

import os
import re

from ..model import JavaFacts

_PRESET = re.compile(r"^(\d+\.\d+)-(\d+\.\d+)-(\d+\.\d+(?:\.\d+)*)$")  # <cuda>-<cudnn>-<javacpp>


def _homes(host) -> list:
    homes = [host.getenv("HOME")] if host.getenv("HOME") else []
    return list(dict.fromkeys(homes + ["/root"] + host.glob("/home/*")))


def probe(ctx) -> None:
    host, java = ctx.host, JavaFacts()
    ctx.facts.java = java
    for home in _homes(host):
        maven = home.rstrip("/") + "/.m2/repository"
        gradle = home.rstrip("/") + "/.gradle/caches/modules-2/files-2.1"
        ctx.searched("java", maven)
        ctx.searched("java", gradle)
        for artifact, key in (("cuda", "javacpp_presets"), ("cuda-platform-redist", "redist")):
            for path in host.glob("%s/org/bytedeco/%s/*" % (maven, artifact)) + host.glob(
                    "%s/org.bytedeco/%s/*" % (gradle, artifact)):
                version = os.path.basename(path)
                if _PRESET.match(version):
                    getattr(java, key).append({"artifact": "org.bytedeco:%s" % artifact, "version": version,
                                               "path": path})
        for path in host.glob(maven + "/org/nd4j/nd4j-cuda-*/*") + host.glob(gradle + "/org.nd4j/nd4j-cuda-*/*"):
            java.nd4j_backends.append({"artifact": os.path.basename(os.path.dirname(path)),
                                       "version": os.path.basename(path), "path": path})
        cache = home.rstrip("/") + "/.javacpp/cache"
        ctx.searched("java", cache)
        for path in host.glob(cache + "/cuda-*.jar") + host.glob(cache + "/*/cuda-*.jar"):
            m = re.match(r"^cuda-(\d+\.\d+-\d+\.\d+-\d+\.\d+(?:\.\d+)*)-", os.path.basename(path))
            if m and not any(p["version"] == m.group(1) for p in java.javacpp_presets):
                java.javacpp_presets.append({"artifact": "org.bytedeco:cuda", "version": m.group(1), "path": path})
