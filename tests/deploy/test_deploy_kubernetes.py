"""deploy/kubernetes: manifests validated against the official kubernetes client's models, the node-problem-detector
plugin configuration checked against NPD's own rules, and the plugin's contract run on fake machine roots."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest
from engines import REPO, tool_venv
from kit import Gpu

from cudnn_doctor.fleet.npd import DEFAULT_MAX_OUTPUT_LENGTH, npd_status, write_status

K8S = REPO / "deploy" / "kubernetes"
PLUGIN = K8S / "npd" / "cudnn-doctor-npd-plugin"
MONITOR = K8S / "npd" / "cudnn-doctor-monitor.json"
MANIFESTS = [K8S / "cudnn-doctor-daemonset.yaml", K8S / "npd-configmap.yaml"]
VALIDATOR = REPO / "tests" / "k8s_validate.py"
MA = "/usr/lib/x86_64-linux-gnu"


@pytest.fixture(scope="module")
def k8s_python():
    venv_bin, why = tool_venv("kubernetes", ["kubernetes>=28,<33", "PyYAML>=6"])
    if venv_bin is None:
        pytest.skip(why)
    return str(venv_bin / "python")


def load_yaml(k8s_python, path):
    out = subprocess.run([k8s_python, "-c", "import json, sys, yaml; "
                          "print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))", str(path)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_manifests_validate_against_the_kubernetes_models(k8s_python):
    proc = subprocess.run([k8s_python, str(VALIDATOR)] + [str(p) for p in MANIFESTS], capture_output=True, text=True)
    print("$ python tests/k8s_validate.py deploy/kubernetes/*.yaml\n" + proc.stdout + proc.stderr)
    assert proc.returncode == 0 and proc.stdout.count("OK  ") == 3, proc.stdout + proc.stderr


def test_the_validator_rejects_what_kubernetes_would(k8s_python, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec:\n"
                   "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
                   "    spec:\n      nodeSelecter: {a: b}\n      containers:\n"
                   "        - {name: c, image: i, volumeMounts: [{name: v}]}\n")
    proc = subprocess.run([k8s_python, str(VALIDATOR), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "unknown field 'nodeSelecter'" in proc.stdout and "mount_path" in proc.stdout, proc.stdout


def test_daemonset_runs_on_gpu_nodes_with_the_host_root_read_only(k8s_python):
    namespace, ds = load_yaml(k8s_python, MANIFESTS[0])
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    [container] = spec["containers"]
    host = next(m for m in container["volumeMounts"] if m["mountPath"] == "/host")
    assert host["readOnly"] is True
    volume = next(v for v in spec["volumes"] if v["name"] == host["name"])
    assert volume["hostPath"]["path"] == "/"
    script = container["args"][0]
    assert "check --root /host --ready --json" in script and "cudnn_doctor.fleet.npd" in script
    assert "--ready --format prometheus" in script and container["securityContext"]["readOnlyRootFilesystem"] is True
    # Every GPU through the NVIDIA runtime, none taken from the scheduler: NVML's health reads and --ready need them.
    assert spec["runtimeClassName"] == "nvidia" and "nvidia.com/gpu" not in str(container.get("resources"))
    assert {e["name"]: e.get("value") for e in container["env"]}["NVIDIA_VISIBLE_DEVICES"] == "all"


def test_configmap_holds_exactly_the_npd_files(k8s_python):
    [cm] = load_yaml(k8s_python, MANIFESTS[1])
    assert cm["data"]["cudnn-doctor-monitor.json"] == MONITOR.read_text()
    assert cm["data"]["cudnn-doctor-npd-plugin"] == PLUGIN.read_text()


def _go_duration(text: str) -> float:
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    assert parts and "".join(n + u for n, u in parts) == text, "not a Go duration: %r" % text
    return sum(float(n) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


def test_npd_monitor_config_follows_npd_rules():
    """The checks of NPD's CustomPluginConfig.ApplyConfiguration/Validate (pkg/custompluginmonitor/types)."""
    cfg = json.loads(MONITOR.read_text())
    assert cfg["plugin"] == "custom" and cfg["source"]
    glob = cfg["pluginConfig"]
    timeout = _go_duration(glob["timeout"])
    _go_duration(glob["invoke_interval"])
    assert isinstance(glob["max_output_length"], int) and glob["max_output_length"] == DEFAULT_MAX_OUTPUT_LENGTH
    defaults = {c["type"] for c in cfg["conditions"]}
    for rule in cfg["rules"]:
        assert rule["type"] in ("temporary", "permanent")
        assert _go_duration(rule["timeout"]) <= timeout, "a rule timeout may not exceed the global timeout"
        if rule["type"] == "permanent":
            assert rule["condition"] in defaults, "a permanent rule needs a default condition"
        assert rule["path"].endswith("/" + PLUGIN.name)
    assert os.access(PLUGIN, os.X_OK)


def plugin(status, *args):
    proc = subprocess.run(["sh", str(PLUGIN), str(status), *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("kernel_module, code, start", [("same", 0, "cuDNN stack OK"), ("575.57.08", 1, "CD104: ")])
def test_plugin_contract_on_fake_roots(machine, check_json, tmp_path, kernel_module, code, start):
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()], kernel_module=kernel_module)
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    _, doc = check_json(machine)
    report, status = tmp_path / "report.json", tmp_path / "npd-status"
    report.write_text(json.dumps(doc))
    assert write_status(str(report), str(status)) == code
    rc, out = plugin(status)
    assert rc == code and out.startswith(start), out
    assert out.endswith("\n") and "\n" not in out[:-1] and len(out) - 1 <= DEFAULT_MAX_OUTPUT_LENGTH


def test_plugin_says_unknown_when_it_cannot_tell(tmp_path):
    status = tmp_path / "npd-status"
    assert plugin(status)[0] == 2  # no status yet
    write_status(str(tmp_path / "missing.json"), str(status))
    rc, out = plugin(status)
    assert rc == 2 and "unreadable" in out
    status.write_text("0\nfine\n")
    old = time.time() - 3 * 3600
    os.utime(status, (old, old))
    rc, out = plugin(status, "7200")
    assert rc == 2 and "old" in out  # a DaemonSet that stopped reporting is not a healthy node
    status.write_text("banana\n")
    assert plugin(status)[0] == 2


def test_long_messages_fit_npd_output_limit():
    doc = {"command": "check", "exit_code": 1, "findings": [
        {"id": "CD%03d" % i, "severity": "error", "title": "ü" * 200} for i in range(30)]}
    code, message = npd_status(doc)
    assert code == 1 and len(message) == DEFAULT_MAX_OUTPUT_LENGTH and message.startswith("CD000 CD001")
    assert message.isascii() and message.endswith("...")
    assert npd_status(doc, limit=20)[1] == "CD000 CD001 CD002..."
