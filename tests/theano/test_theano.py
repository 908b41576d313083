"""Theano on fake machines: .theanorc and THEANO_FLAGS read as Theano reads them, the cuDNN its dnn.* paths hold
judged against the release's own checks (CD760-CD765), and each fix applied in a real shell and checked again."""
from __future__ import annotations

import subprocess
from typing import Dict, List, Optional

import pytest

from cudnn_doctor.model import Finding, Fix, Severity
from kit import Gpu
from test_fixes_runnable import assumed_paths, text_problems

MA = "/usr/lib/x86_64-linux-gnu"
SITE = "/usr/local/lib/python3.6/dist-packages"
HOME = "/home/ann"


def theano(m, version: str, site: str = SITE, egg: bool = False) -> None:
    """A Theano install: its metadata and the files that tell its GPU back-ends apart."""
    old = version.startswith("0.")
    files = {"theano/__init__.py": "", "theano/gpuarray/dnn.py": "",
             "theano/sandbox/cuda/__init__.py": ""}  # 1.0 keeps this one, which only refuses
    if old:
        files["theano/sandbox/cuda/dnn.py"] = ""
    if egg:  # setup.py install / distro packages: <name>-<version>-py3.6.egg-info with PKG-INFO
        m.file("%s/Theano-%s-py3.6.egg-info/PKG-INFO" % (site, version),
               "Metadata-Version: 1.1\nName: Theano\nVersion: %s\n" % version)
        for rel, content in files.items():
            m.file("%s/%s" % (site, rel), content)
    else:
        m.dist(site, "Theano", version, files=files)


def machine_cuda9(m, cudnn: Optional[str] = "7.0.5") -> None:
    """The seeds' era: a GTX 1060, driver 384, CUDA 9.0 in /usr/local/cuda, cuDNN copied into it."""
    m.driver("384.130", cuda=9000, gpus=[Gpu(name="GeForce GTX 1060 6GB", cc="6.1", memory_mib=6078)])
    m.ld_conf("x86_64-linux-gnu.conf", [MA, "/usr/local/cuda/lib64"])
    m.toolkit("9.0.176", layout="txt")
    if cudnn:
        m.cudnn(cudnn, "/usr/local/cuda-9.0/lib64", "/usr/local/cuda-9.0/include", cuda=9000)


def check(m, check_json, flags: Optional[str] = None, extra: Optional[Dict[str, str]] = None):
    env = {"HOME": HOME, "PATH": "/usr/local/cuda/bin:/usr/bin:/bin"}
    if flags is not None:
        env["THEANO_FLAGS"] = flags
    env.update(extra or {})
    m.ld_cache()
    args: List[str] = []
    for key, value in env.items():
        args += ["--env", "%s=%s" % (key, value)]
    code, doc = check_json(m, *args)
    for f in doc["findings"]:  # every fix runnable as printed (the walker of test_fixes_runnable.py)
        if f["id"].startswith("CD76") and f["remedy"]:
            fix = Fix(**f["remedy"])
            problems = text_problems(Finding(id=f["id"], severity=Severity(f["severity"]), title="", remedy=fix))
            # Under --root a fix names the root's files from outside it (as `ldconfig -r ROOT` does).
            root = str(m.root)
            inside = [p[len(root):] if p.startswith(root + "/") else p for p in assumed_paths(fix.commands)]
            assert not problems and not [p for p in inside if not m.p(p).is_symlink()
                                         and not m.p(p).exists()], (problems, fix.commands)
            assert f["severity"] == "info" or fix.commands or fix.manual, f
    return code, doc


def found(doc, rule: str, severity: Optional[str] = None) -> List[dict]:
    return [f for f in doc["findings"] if f["id"] == rule and (severity is None or f["severity"] == severity)]


def applied(fix: dict, env: Dict[str, str]) -> Dict[str, str]:
    """Run a fix's commands, as printed, in bash with `env`; the THEANO_FLAGS and LD_LIBRARY_PATH they leave."""
    script = "\n".join(fix["commands"]) + '\nprintf "%s\\0%s" "${THEANO_FLAGS-}" "${LD_LIBRARY_PATH-}"'
    proc = subprocess.run(["bash", "-ec", script], capture_output=True, text=True, env=env, check=True)
    flags, ld = proc.stdout.split("\0")
    return {"THEANO_FLAGS": flags, **({"LD_LIBRARY_PATH": ld} if ld else {})}


def test_the_seeds_stack_keras_on_theano_0_9_with_cudnn_5(machine, check_json):
    """Seed 004: Keras on Theano 0.9, device=gpu, CNMeM 80 %, cuDNN 5 (5005) copied into /usr/local/cuda."""
    m = machine
    m.driver("375.39", cuda=8000, gpus=[Gpu(name="GeForce GTX 1060 6GB", cc="6.1", memory_mib=6078)])
    m.ld_conf("x86_64-linux-gnu.conf", [MA, "/usr/local/cuda/lib64"])
    m.toolkit("8.0.61", layout="txt")
    m.cudnn("5.0.5", "/usr/local/cuda-8.0/lib64", "/usr/local/cuda-8.0/include", cuda=8000)
    theano(m, "0.9.0")
    m.dist(SITE, "Keras", "1.2.2")
    m.file(HOME + "/.theanorc", "[global]\nfloatX = float32\ndevice = gpu\n\n[lib]\ncnmem = 0.8\n")
    m.file(HOME + "/.keras/keras.json", '{"backend": "theano", "image_dim_ordering": "th"}')
    _, doc = check(m, check_json)
    th = doc["facts"]["theano"]
    [inst] = th["installs"]
    assert inst["version"] == "0.9.0" and inst["backends"] == ["cuda", "gpuarray"]
    assert th["settings"]["device"] == {"value": "gpu", "from": HOME + "/.theanorc"}
    assert inst["header_version"] == "5.0.5" and inst["load_realpath"].endswith("libcudnn.so.5.0.5")
    assert th["keras"][0]["backend"] == "theano" and th["keras"][0]["backend_from"] == HOME + "/.keras/keras.json"
    [ok] = found(doc, "CD760")
    assert ok["severity"] == "info" and "accepts" in ok["title"] and "5.0.5" in ok["title"]
    assert not found(doc, "CD761") and not found(doc, "CD764")  # lib.cnmem is the old back-end's own flag
    [old] = found(doc, "CD763", "warning")  # 0.9 prints: the cuda backend is deprecated
    assert old["remedy"]["commands"] == ['export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}device=cuda"']


def test_newer_cudnn_breaks_the_old_backend_and_the_fix_moves_to_gpuarray(machine, check_json):
    """'Theano refuses to work with' a newer cuDNN: the old back-end calls a function cuDNN 6 removed."""
    machine_cuda9(machine, "7.0.5")
    theano(machine, "0.9.0")
    machine.file(HOME + "/.theanorc", "[global]\ndevice = gpu0\n")
    _, doc = check(machine, check_json)
    [err] = found(doc, "CD760", "error")
    assert "cudnnSetFilterNdDescriptor_v4" in err["title"] and "7.0.5" in err["title"]
    assert err["remedy"]["commands"] == ['export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}device=cuda0"']
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin"})
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    assert not found(after, "CD760", "error") and not found(after, "CD763")
    [warn] = found(after, "CD760", "warning")  # gpuarray in 0.9 builds with 7.0.5, and says it is newer than 5.1
    assert "warns about cuDNN 7.0.5 (it warns from 5.2.0 on)" in warn["title"]


def test_cudnn_8_cannot_build_theano_1_0_and_the_fix_points_at_a_cudnn_7_copy(machine, check_json):
    machine.driver("440.33.01", cuda=10020)
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.toolkit("10.2.89", layout="txt")
    machine.cudnn("8.0.5", MA, "/usr/include/x86_64-linux-gnu", cuda=10020)
    machine.link("/usr/include/cudnn.h", "x86_64-linux-gnu/cudnn_version.h")  # cuDNN 8's cudnn.h: no macros
    machine.cudnn("7.6.5", "/opt/cudnn-7.6.5/lib64", "/opt/cudnn-7.6.5/include", cuda=10020)
    theano(machine, "1.0.5")
    _, doc = check(machine, check_json, flags="device=cuda0,floatX=float32")
    [err] = found(doc, "CD760", "error")
    assert "cudnnGetConvolutionForwardAlgorithm" in err["title"] and "cuDNN 8.0.5" in err["title"]
    assert "cuDNN 8.0.0" in err["title"] and "cudnn-804" in err["evidence"]["removed_source"]
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin", "THEANO_FLAGS": "device=cuda0,floatX=float32"})
    assert env["THEANO_FLAGS"] == ("device=cuda0,floatX=float32,dnn.library_path=/opt/cudnn-7.6.5/lib64,"
                                   "dnn.include_path=/opt/cudnn-7.6.5/include")
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    [inst] = after["facts"]["theano"]["installs"]
    # Theano 1.0 links with -Wl,-rpath,<dnn.library_path>: the module loads that copy without LD_LIBRARY_PATH.
    assert inst["load_path"] == "/opt/cudnn-7.6.5/lib64/libcudnn.so.7" and inst["load_via"] == "RUNPATH"
    assert not found(after, "CD760", "error") and not found(after, "CD761")
    [warn] = found(after, "CD760", "warning")
    assert "warns about cuDNN 7.6.5 (it warns from 7.2.0 on)" in warn["title"]
    assert "from 5.0.0 to below 7.2.0" in warn["fix"]  # compat knows no 7.0/7.1 build for CUDA 10.2


def test_theano_0_9_needs_the_folder_on_the_loader_path_too(machine, check_json):
    """0.x adds no run path for dnn.library_path, so the fix also puts the folder on LD_LIBRARY_PATH."""
    machine_cuda9(machine, "7.0.5")
    machine.cudnn("5.1.10", "/opt/cudnn5/lib64", "/opt/cudnn5/include", cuda=9000)
    theano(machine, "0.9.0")
    _, doc = check(machine, check_json, flags="device=gpu")
    [err] = found(doc, "CD760", "error")
    # The old back-end: moving to gpuarray keeps 7.0.5; both ways are judged again below.
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin", "THEANO_FLAGS": "device=gpu"})
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    assert not found(after, "CD760", "error")
    _, cuda_backend = check(machine, check_json, flags="device=cuda,dnn.enabled=True")
    [warn] = found(cuda_backend, "CD760", "warning")
    assert "/opt/cudnn5/lib64" in warn["fix"] and "LD_LIBRARY_PATH" in warn["fix"]
    env = applied(warn["remedy"], {"PATH": "/usr/bin:/bin", "THEANO_FLAGS": "device=cuda,dnn.enabled=True"})
    assert env["LD_LIBRARY_PATH"] == "/opt/cudnn5/lib64"
    _, fixed = check(machine, check_json, flags=env["THEANO_FLAGS"], extra={"LD_LIBRARY_PATH": env["LD_LIBRARY_PATH"]})
    [ok] = found(fixed, "CD760")
    assert ok["severity"] == "info" and "5.1.10" in ok["title"] and not found(fixed, "CD761")


def test_mixed_header_and_library_and_its_fix(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    machine.cudnn("7.1.4", "/opt/cudnn-7.1/lib64", "/opt/cudnn-7.1/include", cuda=9000)
    theano(machine, "1.0.2")
    machine.file(HOME + "/.theanorc", "[global]\ndevice = cuda\n[dnn]\ninclude_path = /opt/cudnn-7.1/include\n")
    _, doc = check(machine, check_json)
    [err] = found(doc, "CD761", "error")
    assert "The header is version 7104 while the library is version 7005" in err["title"]
    assert err["catalogue"] == ["G9", "D7"]
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin"})
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    assert not found(after, "CD761")


def test_flags_beat_the_rc_files_and_theanorc_lists_files(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    theano(machine, "1.0.5")
    machine.file("/etc/theanorc", "[global]\ndevice = cuda1\n[dnn]\nlibrary_path = /nowhere\nenabled = True\n")
    machine.file(HOME + "/.theanorc", "[global]\ndevice = cuda0\n")
    _, doc = check(machine, check_json, flags="dnn.library_path=/usr/local/cuda/lib64",
                   extra={"THEANORC": "/etc/theanorc:~/.theanorc"})
    th = doc["facts"]["theano"]
    assert th["rc_files"] == ["/etc/theanorc", HOME + "/.theanorc"] == th["rc_found"]
    assert th["settings"]["device"] == {"value": "cuda0", "from": HOME + "/.theanorc"}  # files to the right win
    assert th["settings"]["dnn.library_path"]["from"] == "THEANO_FLAGS"
    assert th["settings"]["dnn.enabled"] == {"value": "True", "from": "/etc/theanorc"}
    assert not found(doc, "CD762")
    assert th["installs"][0]["library_path"] == "/usr/local/cuda/lib64"


def test_paths_without_cudnn_and_a_missing_development_link(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    theano(machine, "1.0.5")
    machine.mkdir("/opt/empty")
    _, doc = check(machine, check_json, flags="device=cuda,dnn.include_path=/opt/empty,dnn.library_path=/opt/empty")
    titles = [f["title"] for f in found(doc, "CD762")]
    assert any("dnn.include_path=/opt/empty (from THEANO_FLAGS) holds no cuDNN header" in t for t in titles)
    assert any("dnn.library_path=/opt/empty (from THEANO_FLAGS) holds no cuDNN library" in t for t in titles)
    machine.cudnn("7.1.4", "/opt/nolink/lib64", "/opt/nolink/include", cuda=9000)
    machine.p("/opt/nolink/lib64/libcudnn.so").unlink()  # a copy made without the -dev link
    _, doc = check(machine, check_json, flags="device=cuda,dnn.library_path=/opt/nolink/lib64")
    [err] = [f for f in found(doc, "CD762", "error") if "libcudnn.so, the name" in f["title"]]
    assert err["remedy"]["commands"] == ["sudo ln -s libcudnn.so.7 %s/opt/nolink/lib64/libcudnn.so" % machine.root]
    machine.link("/opt/nolink/lib64/libcudnn.so", "libcudnn.so.7")  # the fix, inside the fake root
    _, after = check(machine, check_json, flags="device=cuda,dnn.library_path=/opt/nolink/lib64")
    assert not found(after, "CD762")


def test_device_gpu_is_refused_by_theano_1_and_cnmem_is_ignored(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    theano(machine, "1.0.5", egg=True)
    _, doc = check(machine, check_json, flags="device=gpu0,lib.cnmem=0.8")
    assert doc["facts"]["theano"]["installs"][0]["metadata"].endswith("Theano-1.0.5-py3.6.egg-info")
    [err] = found(doc, "CD763", "error")
    assert "It was removed from Theano. Use device=cuda* now." in err["title"]
    [cnmem] = found(doc, "CD764", "warning")
    assert "Theano does not recognise this flag: lib.cnmem" in cnmem["title"]
    assert cnmem["remedy"]["commands"] == ["export THEANO_FLAGS=device=gpu0,gpuarray.preallocate=0.8"]
    # A new value is appended (Theano keeps a key's last value); dropping lib.cnmem rewrites what the check saw.
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin", "THEANO_FLAGS": "device=gpu0,lib.cnmem=0.8"})
    assert env["THEANO_FLAGS"] == "device=gpu0,lib.cnmem=0.8,device=cuda0"
    _, middle = check(machine, check_json, flags=env["THEANO_FLAGS"])
    assert not found(middle, "CD763")
    [cnmem] = found(middle, "CD764", "warning")
    env = applied(cnmem["remedy"], {"PATH": "/usr/bin:/bin", **env})
    assert env["THEANO_FLAGS"] == "device=cuda0,gpuarray.preallocate=0.8"
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    assert not found(after, "CD763") and not found(after, "CD764") and not found(after, "CD760", "error")


@pytest.mark.parametrize("enabled,severity", [("True", "error"), ("auto", "warning")])
def test_too_old_cudnn_is_refused(machine, check_json, enabled, severity):
    machine_cuda9(machine, None)
    machine.cudnn("4.0.7", "/usr/local/cuda-9.0/lib64", "/usr/local/cuda-9.0/include", cuda=9000)
    theano(machine, "1.0.5")
    _, doc = check(machine, check_json, flags="device=cuda,dnn.enabled=%s" % enabled)
    [bad] = found(doc, "CD760", severity)
    assert "Update to v5* or higher, was 4007." in bad["title"]
    # No other copy here: install one compat knows for CUDA 9.0, newest below the 7.2 warning.
    assert "libcudnn7=7.1.4.*-1+cuda9.0" in bad["fix"] and "dnn.enabled=False" in bad["fix"]


def test_volta_needs_cudnn_7_0_2(machine, check_json):
    machine.driver("384.130", cuda=9000, gpus=[Gpu(name="Tesla V100-SXM2-16GB", cc="7.0", memory_mib=16160)])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA, "/usr/local/cuda/lib64"])
    machine.toolkit("9.0.176", layout="txt")
    machine.cudnn("7.0.1", "/usr/local/cuda-9.0/lib64", "/usr/local/cuda-9.0/include", cuda=9000)
    theano(machine, "1.0.1")
    _, doc = check(machine, check_json, flags="device=cuda")
    [bad] = found(doc, "CD760", "warning")
    assert "Use cuDNN 7.0.2 or higher for Volta." in bad["title"] and "Tesla V100" in bad["title"]


def test_cpu_device_and_broken_rc_file(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    theano(machine, "1.0.5")
    machine.file(HOME + "/.theanorc", "device = cuda\n")  # no [global] header: Python's configparser refuses it
    code, doc = check(machine, check_json)
    [err] = found(doc, "CD765", "error")
    assert HOME + "/.theanorc" in err["title"] and "section" in err["title"]
    [info] = found(doc, "CD760", "info")
    assert "device=cpu" in info["title"] and "not used" in info["title"]
    assert code == 1


def test_no_theano_no_theano_findings(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    _, doc = check(machine, check_json, flags="device=gpu,lib.cnmem=1")
    assert doc["facts"]["theano"]["installs"] == [] and doc["facts"]["theano"]["settings"] == {}
    assert not [f for f in doc["findings"] if f["id"].startswith("CD76")]


def docs_example(m) -> None:
    """docs/theano.md's machine: Keras 2.2.4 on Theano 1.0.5 in HOME's venv, the 2017 guide's .theanorc, a system
    cuDNN 8.0.5 and 7.6.5 in /opt (tests/doc_outputs.py prints the page's report from it too)."""
    m.driver("440.33.01", cuda=10020, gpus=[Gpu(name="GeForce GTX 1060 6GB", cc="6.1", memory_mib=6078)])
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.toolkit("10.2.89", layout="txt")
    m.cudnn("8.0.5", MA, "/usr/include/x86_64-linux-gnu", cuda=10020)
    m.link("/usr/include/cudnn.h", "x86_64-linux-gnu/cudnn_version.h")
    m.cudnn("7.6.5", "/opt/cudnn-7.6.5/lib64", "/opt/cudnn-7.6.5/include", cuda=10020)
    venv = HOME + "/venv/lib/python3.6/site-packages"
    theano(m, "1.0.5", site=venv)
    m.dist(venv, "Keras", "2.2.4")
    m.file(HOME + "/.theanorc", "[global]\ndevice = gpu\nfloatX = float32\n\n[lib]\ncnmem = 0.8\n")
    m.file(HOME + "/.keras/keras.json", '{"backend": "theano"}')


def test_the_printed_fixes_compose_in_one_shell(machine, check_json):
    """docs/theano.md's example: Keras on Theano 1.0.5 with the 2017 guide's .theanorc and a system cuDNN 8."""
    m = machine
    docs_example(m)
    venv = HOME + "/venv/lib/python3.6/site-packages"
    _, doc = check(m, check_json, extra={"VIRTUAL_ENV": HOME + "/venv"})
    fixes = [f["remedy"] for f in doc["findings"] if f["id"] in ("CD760", "CD763", "CD764")]
    assert [f["severity"] for f in doc["findings"] if f["id"].startswith("CD76")] == ["error", "error", "warning"]
    assert "Keras 2.2.4 runs on it" in found(doc, "CD760")[0]["title"]
    env = {"PATH": "/usr/bin:/bin"}
    for fix in fixes:
        env.update(applied(fix, env))
    _, after = check(m, check_json, flags=env["THEANO_FLAGS"], extra={"VIRTUAL_ENV": HOME + "/venv"})
    left = [(f["id"], f["severity"]) for f in after["findings"] if f["id"].startswith("CD76")]
    assert left == [("CD760", "warning"), ("CD764", "info")]


def test_a_library_without_its_header(machine, check_json):
    """Catalogue G9: 'cannot compile with cuDNN ... cudnn.h: No such file or directory'."""
    machine_cuda9(machine, None)
    machine.cudnn("7.1.4", "/usr/local/cuda-9.0/lib64", None, cuda=9000)  # the runtime package only
    theano(machine, "1.0.3")
    _, doc = check(machine, check_json, flags="device=cuda0,dnn.enabled=True")
    [err] = found(doc, "CD760", "error")
    assert "finds no cudnn.h" in err["title"]
    assert "libcudnn7-dev=7.1.4.*-1+cuda9.0" in err["fix"]
    machine.cudnn("7.1.4", "/opt/cudnn-7.1.4/lib64", "/opt/cudnn-7.1.4/include", cuda=9000)  # NVIDIA's archive
    _, doc = check(machine, check_json, flags="device=cuda0,dnn.enabled=True")
    [err] = found(doc, "CD760", "error")
    env = applied(err["remedy"], {"PATH": "/usr/bin:/bin", "THEANO_FLAGS": "device=cuda0,dnn.enabled=True"})
    _, after = check(machine, check_json, flags=env["THEANO_FLAGS"])
    [ok] = found(after, "CD760")
    assert ok["severity"] == "info" and "7.1.4" in ok["title"] and not found(after, "CD761")


# --- rules on Facts built in Python (no files) -------------------------------------------------------------------

def _judge(facts) -> List[dict]:
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.model import to_plain
    from cudnn_doctor.rules import RuleContext, evaluate

    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [to_plain(f) for f in findings if f.id.startswith("CD76")]


def _theano_on_real_machine(version: str, settings: Dict[str, str]):
    from cudnn_doctor.model_theano import TheanoFacts, TheanoInstall
    from facts_factory import SYSLIB, real_machine

    facts = real_machine()  # H100, CUDA 13.0, system cuDNN 9.14
    inst = TheanoInstall(version=version, location="/opt/legacy/lib/python3.6/site-packages", metadata="m",
                         backends=["gpuarray"], header_path="/usr/include/cudnn.h", header_version="9.14.0",
                         link_path=SYSLIB + "/libcudnn.so", link_realpath=SYSLIB + "/libcudnn.so.9.14.0",
                         load_path=SYSLIB + "/libcudnn.so.9", load_realpath=SYSLIB + "/libcudnn.so.9.14.0",
                         load_via="ld.so.cache")
    facts.theano = TheanoFacts(installs=[inst], rc_files=[HOME + "/.theanorc"],
                               settings={k: {"value": v, "from": "THEANO_FLAGS"} for k, v in settings.items()},
                               flags=",".join("%s=%s" % kv for kv in settings.items()))
    return facts


def test_a_cuda_13_machine_has_no_cudnn_theano_can_build_with():
    [f] = [f for f in _judge(_theano_on_real_machine("1.0.5", {"device": "cuda0"})) if f["id"] == "CD760"]
    assert f["severity"] == "error" and "cudnnGetConvolutionForwardAlgorithm" in f["title"]
    assert "accepts cuDNN 5 to 7, and compat knows no such build for CUDA 13.0" in f["fix"]
    # Nothing to install: the command is the one that lets Theano run, without cuDNN.
    assert f["remedy"]["commands"] == ['export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}dnn.enabled=False"']


@pytest.mark.parametrize("device,expected", [("gpu", []), ("cuda", ["warning"])])
def test_cnmem_is_read_by_the_old_backend_of_0_9_only(device, expected):
    facts = _theano_on_real_machine("0.9.0", {"device": device, "lib.cnmem": "0.5", "dnn.enabled": "False"})
    assert [f["severity"] for f in _judge(facts) if f["id"] == "CD764"] == expected


def test_opencl_and_cpu_devices_do_not_use_cudnn():
    for device in ("opencl0:0", "cpu"):
        [f] = _judge(_theano_on_real_machine("1.0.5", {"device": device}))
        assert f["severity"] == "info" and "no CUDA device configured" in f["title"], f["title"]


def test_a_dnn_enabled_value_the_release_does_not_know():
    facts = _theano_on_real_machine("0.9.0", {"device": "cuda", "dnn.enabled": "no_check"})
    [f] = [f for f in _judge(facts) if f["id"] == "CD765"]
    assert f["severity"] == "error" and "is not one of auto, True, False" in f["title"]
    assert f["remedy"]["commands"] == ['export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}dnn.enabled=auto"']
    assert not [f for f in _judge(_theano_on_real_machine("1.0.5", {"device": "cuda", "dnn.enabled": "no_check"}))
                if f["id"] == "CD765"]


def test_a_fifo_or_folder_in_theanorc_neither_hangs_nor_misleads(machine, check_json):
    import os

    machine_cuda9(machine, "7.0.5")
    theano(machine, "1.0.5")
    machine.mkdir(HOME + "/conf.d")
    os.mkfifo(str(machine.p(HOME + "/.theanorc")))
    code, doc = check(machine, check_json, flags="device=cuda", extra={"THEANORC": "~/.theanorc:~/conf.d"})
    assert [b["path"] for b in doc["facts"]["blocked"]] == [HOME + "/.theanorc"] and code == 4
    assert doc["facts"]["theano"]["rc_found"] == [] and not found(doc, "CD765")


@pytest.mark.parametrize("text,rule", [
    ("RuntimeError: Mixed dnn version. The header is version 5110 while the library is version 7605.", "CD761"),
    ("UserWarning: Your cuDNN version is more recent than Theano. If you encounter problems, try updating Theano or "
     "downgrading cuDNN to a version >= v5 and <= v7.", "CD760"),
    ("dnn_fwd.c:323:15: error: 'cudnnGetConvolutionForwardAlgorithm' was not declared in this scope", "CD760"),
    ("ValueError: You are tring to use the old GPU back-end. It was removed from Theano. Use device=cuda* now.",
     "CD763"),
    ("UserWarning: Theano does not recognise this flag: lib.cnmem", "CD764"),
    ('ValueError: Invalid value ("no_check") for configuration variable "dnn.enabled". Valid options are '
     "('auto', 'True', 'False')", "CD765"),
])
def test_explain_routes_theanos_own_messages(text, rule):
    from cudnn_doctor.explain import match_symptoms, routed_rules
    from cudnn_doctor.knowledge import load_compat

    assert rule in routed_rules(match_symptoms(text, load_compat()))


def test_dnn_bin_path_is_the_run_path_of_theano_1(machine, check_json):
    machine_cuda9(machine, "7.0.5")
    machine.cudnn("7.0.5", "/opt/run/lib64", "/opt/run/include", cuda=9000)
    theano(machine, "1.0.4")
    _, doc = check(machine, check_json, flags="device=cuda,dnn.bin_path=/opt/run/lib64")
    [inst] = doc["facts"]["theano"]["installs"]
    assert inst["load_path"] == "/opt/run/lib64/libcudnn.so.7" and inst["load_via"] == "RUNPATH"
