"""The real-world generator: a seeded draw of a real environment over the wheel pool (tests/realworld_pool.py).
One to three frameworks in one venv, their cuDNN pins honoured or forced off, and the set-ups people really have:
LD_LIBRARY_PATH before or after the wheel, a system copy in the ld.so.cache, a conda prefix, wheels through
`pip --target` on PYTHONPATH, a tarball folder, a missing or foreign sub-library; and, drawn on a stream of their
own so every earlier draw stays as it was (places=False), the other places a process takes from: a user site, a
.pth folder, a venv on PATH but not activated, an LD_PRELOAD of another cuDNN. draw(seed, n) is a pure function of
its arguments, so `scripts/realworld.sh --draws N --seed S` reproduces any draw."""
from __future__ import annotations

import dataclasses
import random
from typing import List, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import realworld_pool as pool
from realworld_stacks import Case, Folder, Wheel

SETUPS = ("plain", "plain", "ld-before", "ld-after", "system", "conda", "target", "tarball", "missing-sub",
          "foreign-sub", "no-cudnn")
SUBLIBS = {8: ("libcudnn_ops_infer.so.8", "libcudnn_cnn_infer.so.8", "libcudnn_adv_infer.so.8"),
           9: ("libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_engines_precompiled.so.9")}
EXTRAS = ("and-cuda", "with-cuda", "with_cuda", "cudnn", "cuda")
PLACES = ("user-site", "pth", "path-env", "preload")


def cudnn_pin(wheels: Sequence[Wheel], extra: bool) -> Optional[Requirement]:
    """The framework's nvidia-cudnn-* requirement, read from its wheels' METADATA (under its extras when drawn)."""
    return requirement(wheels, "nvidia-cudnn-", extra)


def requirement(wheels: Sequence[Wheel], project: str, extra: bool) -> Optional[Requirement]:
    """The framework's first requirement of a project whose name starts with `project`, from its wheels' METADATA
    (under its extras when drawn)."""
    for name, version in wheels:
        tree = pool.unpacked((name, version))
        meta = next(tree.glob("*.dist-info/METADATA"), None) if tree else None
        for line in (meta.read_text(errors="replace").splitlines() if meta else []):
            if not line.startswith("Requires-Dist:"):
                continue
            try:
                req = Requirement(line.split(":", 1)[1].strip())
            except InvalidRequirement:
                continue
            if not canonicalize_name(req.name).startswith(project):
                continue
            env = [{"extra": e, "platform_system": "Linux", "sys_platform": "linux"} for e in
                   ([""] + list(EXTRAS) if extra else [""])]
            if req.marker is None or any(req.marker.evaluate(e) for e in env):
                return req
    return None


def _major(wheel: Wheel) -> int:
    return Version(wheel[1]).major


def draw(seed: int, n: int, places: bool = True) -> Case:
    """Draw n of seed; ``places=False`` draws it as the generator did before it drew the other places (the
    regression lines recorded then)."""
    case = _draw(seed, n)
    return _with_place(case, random.Random("%d-%d-places" % (seed, n))) if places else case


def _with_place(case: Case, rng: random.Random) -> Case:
    """The draw, in four of ten, moved to one of the other places a process takes packages or libraries from."""
    if rng.random() >= 0.4:
        return case
    place = rng.choice(PLACES)
    nvidia = [w for w in case.site if w[0].startswith("nvidia-")]
    cudnn = [w for w in nvidia if w[0].startswith("nvidia-cudnn-")]
    note = case.note + "; " + place
    if place == "user-site" and not case.target:
        return dataclasses.replace(case, user_site=True, note=note)
    if place == "pth" and nvidia and not case.target and not case.drop_from_site and "@site-cudnn" not in case.ld_path:
        return dataclasses.replace(case, site=[w for w in case.site if w not in nvidia], pth=nvidia, note=note)
    if place == "path-env" and case.conda is None:
        return dataclasses.replace(case, activated=False, note=note)
    if place == "preload" and cudnn and not case.preload:
        other = rng.choice([w for w in pool.CUDNN if w != cudnn[0]])
        return dataclasses.replace(case, folders=[*case.folders, Folder("p", other)],
                                   preload=["p/libcudnn.so.%d" % _major(other)], note=note)
    return case


def _draw(seed: int, n: int) -> Case:
    rng = random.Random("%d-%d" % (seed, n))
    names = list(pool.FRAMEWORKS)
    count = rng.choices((1, 2, 3), (0.5, 0.35, 0.15))[0]
    chosen: List[str] = []
    while len(chosen) < count:
        pick = rng.choice(names)
        if pool.FRAMEWORKS[pick][0] not in {pool.FRAMEWORKS[c][0] for c in chosen}:
            chosen.append(pick)
    fw_wheels: List[Wheel] = []
    cudnn: Optional[Wheel] = None
    extra_libs: List[Wheel] = []
    notes = []
    for pick in chosen:  # pip installs in order: the last framework's cuDNN pin wins the one nvidia/cudnn folder
        kind, ws = pool.FRAMEWORKS[pick]
        fw_wheels += ws
        extra = rng.random() < 0.7
        req = cudnn_pin(ws, extra)
        honour = rng.random() < 0.6
        fits = [w for w in pool.CUDNN if req is not None and canonicalize_name(req.name) == w[0]
                and req.specifier.contains(w[1], prereleases=True)]
        if req is not None and honour and fits:
            cudnn = rng.choice(fits)
            notes.append("%s pin %s honoured" % (pick, req.specifier))
        elif rng.random() < 0.5:
            cudnn = rng.choice(pool.CUDNN)
            notes.append("%s pin forced off" % pick)
        if kind == "tensorflow" and extra:
            extra_libs += [w for w in pool.TF_AND_CUDA if w not in extra_libs]
        if kind == "torch":
            cudart = ("nvidia-cuda-runtime-cu12", "12.3.101")
            # what its libtorch_global_deps.so needs: the CUDA runtime, and NVTX where torch pins it (2.4's global
            # deps need libnvToolsExt.so.1; without it torch preloads every wheel from sys.path instead)
            nvtx = [pool.NVTX] if requirement(ws, "nvidia-nvtx-", False) else []
            extra_libs += [w for w in [cudart] + nvtx if w not in extra_libs]
    setup = rng.choice(SETUPS)
    other = rng.choice([w for w in pool.CUDNN if w != cudnn])
    site: List[Wheel] = [w for w in fw_wheels[1:]]
    nvidia: List[Wheel] = list(extra_libs) + ([cudnn] if cudnn and setup != "no-cudnn" else [])
    case = dict(name="draw-%d-%d" % (seed, n), framework=fw_wheels[0], note="; ".join([setup] + notes),
                judged=[w for w in fw_wheels[1:] if not w[0].endswith("-plugin")])
    if setup == "target":
        case.update(target=nvidia)
    else:
        site += nvidia
    if setup in ("ld-before", "ld-after") and cudnn:
        case.update(folders=[Folder("c", other)], ld_path=["c", "@site-cudnn"] if setup == "ld-before"
                    else ["@site-cudnn", "c"])
    elif setup in ("ld-before", "ld-after"):
        case.update(folders=[Folder("c", other)], ld_path=["c"])
    elif setup == "system":
        case.update(system=Folder("sys", other))
    elif setup == "conda":
        case.update(conda=Folder("conda", other))
    elif setup == "tarball":
        label = "cudnn-linux-x86_64-%s_cuda%s-archive/lib" % (other[1], other[0][-2:])
        case.update(folders=[Folder(label, other)], ld_path=[label])
    elif setup == "missing-sub" and cudnn:
        case.update(drop_from_site=[rng.choice(SUBLIBS[_major(cudnn)])])
    elif setup == "foreign-sub" and cudnn:
        same = [w for w in pool.CUDNN if _major(w) == _major(cudnn) and w != cudnn]
        if same:
            case.update(folders=[Folder("f", rng.choice(same), (rng.choice(SUBLIBS[_major(cudnn)]),))], ld_path=["f"])
    return Case(site=site, **case)


def draws(seed: int, count: int) -> List[Case]:
    return [draw(seed, n) for n in range(count)]
