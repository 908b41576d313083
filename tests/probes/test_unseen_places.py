"""Every place a process draws cuDNN or packages from (issue 43, item 5), on fake machines with real ELF files:
LD_PRELOAD and /etc/ld.so.preload (before every search path), user sites, folders `.pth` files add, and every Python
environment on PATH."""
from __future__ import annotations

import pytest

from cudnn_doctor.diagnose import collect_facts
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate
from kit import build_ld_cache

SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
OTHER = "/opt/cudnn913/lib"
TORCH_PIN = 'nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"'


def _facts(machine, **env):
    base = {"PATH": "/usr/bin:/bin"}
    base.update(env)
    return collect_facts(str(machine.root), env=base)


def _torch_over_its_wheel(machine):
    """torch 2.15 (built for cuDNN 9.26, its pin) whose RPATH finds its own 9.26 wheel; cuDNN 9.13 elsewhere."""
    machine.driver()
    machine.pip_cudnn(SITE, "9.26.0.51", cuda_major=13, cudart=13000)
    machine.dist(SITE, "torch", "2.15.0", requires=[TORCH_PIN], files={"torch/version.py": "cuda = '13.2'\n"})
    machine.consumer(SITE + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], rpath="$ORIGIN/../../nvidia/cudnn/lib")
    machine.cudnn("9.13.0", OTHER, None, cuda=13000)
    build_ld_cache(machine)


def _findings(facts):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return findings


def test_ld_preload_of_another_libcudnn_answers_torchs_request_and_torch_refuses_it(machine):
    _torch_over_its_wheel(machine)
    facts = _facts(machine, LD_PRELOAD=OTHER + "/libcudnn.so.9")
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn.path == OTHER + "/libcudnn.so.9" and torch.resolved_cudnn.via == "LD_PRELOAD"
    findings = _findings(facts)
    [cd711] = [f for f in findings if f.id == "CD711"]
    assert cd711.severity.value == "error"
    assert "PyTorch was compiled  against 9.26.0.51 but found runtime version 9.13.0" in cd711.detail
    assert cd711.remedy.commands == ["unset LD_PRELOAD"]
    assert not [f for f in findings if f.id == "CD503"]  # one finding, with the fix that takes the preload away


def test_without_the_preload_torch_loads_its_own_wheel(machine):
    _torch_over_its_wheel(machine)
    [torch] = _facts(machine).python.frameworks
    assert torch.resolved_cudnn.path == SITE + "/nvidia/cudnn/lib/libcudnn.so.9"
    assert torch.resolved_cudnn.via == "RPATH"


def test_etc_ld_so_preload_by_bare_name_is_found_as_the_loader_finds_it(machine):
    _torch_over_its_wheel(machine)
    machine.ld_conf("cudnn913.conf", [OTHER])
    machine.file("/etc/ld.so.preload", "# forced\nlibcudnn.so.9\n")
    assert build_ld_cache(machine) or pytest.skip("ldconfig is not available")
    facts = _facts(machine)
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn.via == "/etc/ld.so.preload" and torch.resolved_cudnn.path.startswith(OTHER)
    [cd711] = [f for f in _findings(facts) if f.id == "CD711"]
    assert cd711.remedy.commands[0].startswith("sudo sed -i ") and "ld.so.preload" in cd711.remedy.commands[0]


def _framework_sites(facts):
    return {fw.name: fw.location for fw in facts.python.frameworks}


def test_a_framework_in_a_folder_a_pth_file_adds_is_found(machine):
    site = "/opt/app/.venv/lib/python3.11/site-packages"
    machine.file(site + "/extra.pth", "# shared packages\nimport os\n/srv/pkgs\n../../../../shared\n")
    machine.dist("/srv/pkgs", "cupy-cuda12x", "13.6.0")
    machine.dist("/opt/app/shared", "onnxruntime-gpu", "1.19.0")
    assert _framework_sites(_facts(machine)) == {"cupy-cuda12x": "/srv/pkgs",
                                                 "onnxruntime-gpu": "/opt/app/shared"}


def test_user_sites_are_found_from_pythonuserbase_and_home(machine):
    machine.dist("/work/ub/lib/python3.11/site-packages", "torch", "2.9.1", files={"torch/version.py": "cuda = None\n"})
    machine.dist("/home/ann/.local/lib/python3.12/site-packages", "cupy-cuda12x", "13.6.0")
    assert _framework_sites(_facts(machine, PYTHONUSERBASE="/work/ub")) == {
        "torch": "/work/ub/lib/python3.11/site-packages"}
    assert _framework_sites(_facts(machine, HOME="/home/ann")) == {
        "cupy-cuda12x": "/home/ann/.local/lib/python3.12/site-packages"}


def test_an_environment_whose_bin_is_on_path_is_read(machine):
    machine.file("/srv/env2/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.3\n")
    machine.dist("/srv/env2/lib/python3.12/site-packages", "onnxruntime-gpu", "1.19.0")
    assert _framework_sites(_facts(machine)) == {}
    assert _framework_sites(_facts(machine, PATH="/srv/env2/bin:/usr/bin:/bin")) == {
        "onnxruntime-gpu": "/srv/env2/lib/python3.12/site-packages"}


@pytest.mark.parametrize("system_site,expected", [
    ("false", ["VENV"]),
    ("true", ["VENV", "USER", "BASE"]),
])
def test_sys_path_order_of_a_virtual_environment(machine, system_site, expected):
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.python_places import sys_path_sites
    places = {"VENV": "/opt/v/lib/python3.11/site-packages", "USER": "/home/ann/.local/lib/python3.11/site-packages",
              "BASE": "/usr/local/lib/python3.11/site-packages"}
    for folder in places.values():
        machine.mkdir(folder)
    machine.file("/opt/v/pyvenv.cfg", "home = /usr/local/bin\ninclude-system-site-packages = %s\n" % system_site)
    host = Host(str(machine.root), env={"HOME": "/home/ann"})
    assert sys_path_sites(host, places["VENV"]) == [places[k] for k in expected]


def test_sys_path_order_without_a_virtual_environment_puts_the_user_site_first(machine):
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.python_places import sys_path_sites
    system, user = "/usr/local/lib/python3.12/dist-packages", "/home/ann/.local/lib/python3.12/site-packages"
    machine.mkdir(system)
    machine.mkdir(user)
    machine.file(user + "/more.pth", "/srv/more\n")
    machine.mkdir("/srv/more")
    assert sys_path_sites(Host(str(machine.root), env={"HOME": "/home/ann"}), system) == [user, "/srv/more", system]


def test_a_wheel_library_replaced_by_another_releases_is_reinstalled_with_force_reinstall(machine):
    import os
    import shutil
    _torch_over_its_wheel(machine)
    lib = machine.p(SITE + "/nvidia/cudnn/lib")
    record = "".join("nvidia/cudnn/lib/%s,sha256=x,%d\n" % (n, os.path.getsize(lib / n))
                     for n in sorted(os.listdir(lib)))
    machine.file(SITE + "/nvidia_cudnn_cu13-9.26.0.51.dist-info/RECORD", record)
    assert not [f for f in _findings(_facts(machine)) if f.id == "CD712"]  # whole: nothing to say
    # another release's graph library copied over the wheel's (real releases' builds differ in size)
    shutil.copyfile(machine.p(OTHER + "/libcudnn_graph.so.9.13.0"), lib / "libcudnn_graph.so.9")
    with open(lib / "libcudnn_graph.so.9", "ab") as f:
        f.write(b"\0" * 64)
    facts = _facts(machine)
    [wheel] = [w for w in facts.python.nvidia_wheels if w["name"] == "nvidia-cudnn-cu13"]
    assert wheel["altered"] == "libcudnn_graph.so.9"
    [cd712] = [f for f in _findings(facts) if f.id == "CD712"]
    assert cd712.severity.value == "error" and "loaded by torch 2.15.0" in cd712.title
    assert cd712.remedy.commands == ['pip install --force-reinstall --no-deps "nvidia-cudnn-cu13==9.26.0.51"']


SYSTEM = "/usr/lib/x86_64-linux-gnu"


def test_a_preloaded_system_shim_takes_its_own_releases_parts_by_full_name_and_torch_refuses_it(machine):
    # H200 (docs/real-stacks.md, "Which file a shim asks for"): LD_PRELOAD of the system 9.14 libcudnn.so.9 with the
    # 9.19 wheel's folder first on LD_LIBRARY_PATH; LD_DEBUG showed the shim asking for libcudnn_graph.so.9.14.0 first,
    # found in the system folder, and torch 2.11 stopped at "found runtime version (9, 14, 0)". Here 9.13 and 9.26.
    _torch_over_its_wheel(machine)
    machine.cudnn("9.13.0", SYSTEM, None, cuda=13000)
    build_ld_cache(machine)
    facts = _facts(machine, LD_PRELOAD=SYSTEM + "/libcudnn.so.9", LD_LIBRARY_PATH=SITE + "/nvidia/cudnn/lib")
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn.path == SYSTEM + "/libcudnn.so.9"
    graph = torch.resolved_cudnn_parts["libcudnn_graph.so.9"]
    assert graph.path == SYSTEM + "/libcudnn_graph.so.9.13.0"
    [cd711] = [f for f in _findings(facts) if f.id == "CD711"]
    assert "found runtime version 9.13.0" in cd711.detail


def test_a_preloaded_wheel_shim_forwards_to_the_parts_its_search_finds(machine):
    # Draw 399261-39 (the real loader as oracle): a preloaded 9.10.2 wheel shim, which has no full-name files to find,
    # took every sub-library from the framework's own 9.24 wheel first on LD_LIBRARY_PATH; cudnnGetVersion() said
    # 9.24.0 and torch accepts it. Here a 9.13 wheel-layout folder preloaded over torch's 9.26 wheel.
    _torch_over_its_wheel(machine)
    machine.cudnn("9.13.0", "/opt/p", None, cuda=13000, versioned_names=False)
    build_ld_cache(machine)
    facts = _facts(machine, LD_PRELOAD="/opt/p/libcudnn.so.9", LD_LIBRARY_PATH=SITE + "/nvidia/cudnn/lib")
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn.path == "/opt/p/libcudnn.so.9"
    assert {p.path.rsplit("/", 1)[0] for p in torch.resolved_cudnn_parts.values()} == {SITE + "/nvidia/cudnn/lib"}
    assert not [f for f in _findings(facts) if f.id == "CD711"]


def test_a_preload_gone_hands_the_framework_what_ld_library_path_holds_and_the_fix_goes_on(machine):
    """realworld draw 486637-22: TensorFlow 2.19 (built with 9.3, its pin in its site) under an LD_PRELOAD of 9.5.1,
    a conda prefix's 9.1 on LD_LIBRARY_PATH. `unset LD_PRELOAD` alone left TensorFlow on that 9.1 (LD_LIBRARY_PATH
    comes before its RUNPATH; CD503 after): the probe records what loads once the preload is gone, and CD711's fix
    takes that folder off the path too. Where nothing refused waits there, the preload is the whole fix."""
    conda = "/opt/conda/lib"
    machine.driver()
    machine.pip_cudnn(SITE, "9.26.0.51", cuda_major=13, cudart=13000)
    machine.dist(SITE, "torch", "2.15.0", requires=[TORCH_PIN], files={"torch/version.py": "cuda = '13.2'\n"})
    machine.consumer(SITE + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], runpath="$ORIGIN/../../nvidia/cudnn/lib")
    machine.cudnn("9.13.0", OTHER, None, cuda=13000)
    machine.cudnn("9.10.0", conda, None, cuda=13000)
    build_ld_cache(machine)
    facts = _facts(machine, LD_PRELOAD=OTHER + "/libcudnn.so.9", LD_LIBRARY_PATH=conda)
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn.via == "LD_PRELOAD"
    assert (torch.cudnn_without_preload.path, torch.cudnn_without_preload.via) == (conda + "/libcudnn.so.9",
                                                                                    "LD_LIBRARY_PATH")
    [cd711] = [f for f in _findings(facts) if f.id == "CD711"]
    assert cd711.remedy.commands[0] == "unset LD_PRELOAD", cd711.remedy.commands
    assert any(c.startswith("export LD_LIBRARY_PATH=") and "grep -vxF -e %s " % conda in c
               for c in cd711.remedy.commands[1:]), cd711.remedy.commands

    plain = _facts(machine, LD_PRELOAD=OTHER + "/libcudnn.so.9")  # nothing on LD_LIBRARY_PATH: its own 9.26 next
    [torch] = plain.python.frameworks
    assert torch.cudnn_without_preload.via == "RUNPATH" and _facts(machine).python.frameworks[0].cudnn_without_preload \
        is None
    assert [f for f in _findings(plain) if f.id == "CD711"][0].remedy.commands == ["unset LD_PRELOAD"]
