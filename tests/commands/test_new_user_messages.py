"""Messages a new user can act on: section marks that mean what they say, counts in words, fixes typed for the
machine that runs them (root, --root), installer fixes for cuDNN 8, CD108 only from a module list that was read,
smoke blaming the missing layer, and help text with real metavars."""
from __future__ import annotations

import io
import re

from clirunner import CliRunner
from rich.console import Console

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, Finding, Fix, Severity
from cudnn_doctor.results import Report
from cudnn_doctor.render.human import render_human
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import real_machine, resolution


def _human(report: Report, verbose: int = 0) -> str:
    out = io.StringIO()
    render_human(report, Console(file=out, width=200, color_system=None), verbose=verbose)
    return out.getvalue()


def _app():
    from cudnn_doctor.cli import app
    return app


# --- section marks ---------------------------------------------------------------------------------------------------

def test_empty_required_layers_are_warnings_not_ticks():
    facts = Facts()
    facts.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", None)
    text = _human(Report(facts=facts))
    assert "[!] GPUs (0)" in text and "[!] CUDA toolkits (0)" in text
    assert "[!] What a plain process loads" in text and "libcuda.so.1 -> not found" in text
    assert "[·] Python frameworks (0)" in text and "[✓]" not in text


def test_a_healthy_machine_keeps_its_ticks():
    text = _human(Report(facts=real_machine()))
    assert "[✓] GPUs (1)" in text and "[✓] CUDA toolkits (1)" in text and "[✓] What a plain process loads" in text


def test_verbose_counts_one_place_in_the_singular():
    facts = real_machine()
    facts.searched = {"host": ["/proc/sys/kernel/osrelease"], "cudnn": ["/usr/lib (ld.so.conf)", "/opt"]}
    text = _human(Report(facts=facts), verbose=1)
    assert "host: 1 place\n" in text and "cudnn: 2 places" in text and "1 places" not in text


def test_cd401_searched_lists_the_cudnn_probes_places_only():
    facts = real_machine()
    facts.cudnn = []
    facts.searched = {"machine-state": ["/proc/driver/nvidia-nvswitch", "/var/cudnn-local-repo-*"],
                      "cudnn": ["/usr/local/cuda/lib64 (toolkit /usr/local/cuda)", "/usr/lib (default loader path)"]}
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    [cd401] = [f for f in findings if f.id == "CD401"]
    assert cd401.evidence["searched"] == ["/usr/local/cuda/lib64 (toolkit /usr/local/cuda)",
                                          "/usr/lib (default loader path)"]


def test_probes_record_each_place_by_itself(machine):
    from cudnn_doctor.diagnose import collect_facts

    machine.driver()
    facts = collect_facts(str(machine.root))
    assert len(facts.searched["host"]) > 1 and len(facts.searched["machine-state"]) > 1
    assert all(", " not in p for places in facts.searched.values() for p in places), facts.searched


# --- fixes typed for the machine ---------------------------------------------------------------------------------

def test_root_runs_fixes_without_sudo():
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies.acting import building_for
    from cudnn_doctor.remedies.containers import container_gpu_fix
    from cudnn_doctor.remedies.loader import rebuild_loader_cache_fix

    with building_for(Target(as_root=True)):
        assert rebuild_loader_cache_fix().commands == ["ldconfig"]
        # The host's commands are in the fix's command list, written for the Target like every command (eb6b95d).
        assert "nvidia-ctk runtime configure --runtime=docker" in container_gpu_fix().commands
    with building_for(Target(as_root=False)):
        assert rebuild_loader_cache_fix().commands == ["sudo ldconfig"]


def test_under_root_ldconfig_and_files_are_the_roots(machine, check_json):
    """No /etc/ld.so.cache in the root: CD607's fix rebuilds the root's cache, not this machine's."""
    machine.driver()
    machine.toolkit("12.4")
    machine.cudnn("9.1.0", "/opt/cudnn/lib", "/opt/cudnn/include", cuda=12040)
    _, doc = check_json(machine)
    root = str(machine.root)
    fixes = {f["id"]: f["fix"] for f in doc["findings"]}
    assert fixes["CD607"] == "sudo ldconfig -r %s" % root, fixes
    assert all("sudo ldconfig" not in fix or "ldconfig -r %s" % root in fix for fix in fixes.values()), fixes
    tee = next(fix for fix in fixes.values() if "tee " in fix)
    assert re.search(r"^echo /[^|]* \| sudo tee %s/etc/ld\.so\.conf\.d/" % re.escape(root), tee), tee


# --- installer fixes for cuDNN 8 ----------------------------------------------------------------------------------

def _cudnn8_in_toolkit(machine, version):
    machine.driver()
    prefix = machine.toolkit("12.4")
    machine.cudnn(version, prefix + "/lib64", prefix + "/include", cuda=12040,
                  subs=["ops_infer", "ops_train", "cnn_infer", "adv_infer", "adv_train"])  # cnn_train missing
    machine.ld_conf("cuda.conf", [prefix + "/lib64"])
    machine.ld_cache()


def test_a_cudnn8_copy_missing_a_sublibrary_is_reinstalled_by_the_installer(machine, check_json):
    _cudnn8_in_toolkit(machine, "8.9.7")
    _, doc = check_json(machine)
    [cd402] = [f for f in doc["findings"] if f["id"] == "CD402"]
    assert cd402["remedy"]["doctor"] == ("sudo /opt/cudnn-doctor/bin/cudnn-doctor install --version 8.9.7 --cuda 12 "
                                         "--cuda-home "
                                         "%s/usr/local/cuda" % machine.root), cd402["fix"]


def test_a_cudnn8_release_without_a_manifest_gets_the_newest_of_its_major(machine, check_json):
    _cudnn8_in_toolkit(machine, "8.9.2")
    _, doc = check_json(machine)
    [cd402] = [f for f in doc["findings"] if f["id"] == "CD402"]
    assert "cudnn-doctor install --version 8.9.7 --cuda 12" in cd402["fix"]


def test_the_installer_fetches_what_nvidia_publishes_a_manifest_for():
    compat = load_compat()
    assert compat.installer_fetches("9.1.0") and compat.installer_fetches("8.9.7.29")
    assert not compat.installer_fetches("8.9.2") and not compat.installer_fetches("7.6.5")
    assert compat.newest_fetchable(8, "8.9.2") == "8.9.7" and compat.newest_fetchable(7) is None


# --- CD108 --------------------------------------------------------------------------------------------------------

def test_cd108_needs_a_module_list_that_was_read():
    facts = real_machine()
    facts.driver.loaded_modules, facts.driver.modules_listed = [], False  # /proc/modules unreadable
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    assert not [f for f in findings if f.id == "CD108"]
    facts.driver.modules_listed = True  # read, and nvidia_uvm is not in it
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    assert [f for f in findings if f.id == "CD108"]


# --- smoke --------------------------------------------------------------------------------------------------------

def test_smoke_without_a_driver_blames_the_driver(monkeypatch):
    import cudnn_doctor.which_cudnn as smoke_cmd  # where smoke and bench choose the library to test

    def no_driver(root="/"):
        facts = Facts()
        facts.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", None)
        facts.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)
        return facts

    monkeypatch.setattr(smoke_cmd, "_loader_facts", no_driver)
    monkeypatch.setattr(smoke_cmd, "_load_facts", no_driver)
    result = CliRunner().invoke(_app(), ["smoke"])
    assert result.exit_code == 1
    assert "no NVIDIA driver was found" in result.output and "no cuDNN library was found" not in result.output


# --- help -----------------------------------------------------------------------------------------------------------

def test_help_shows_metavars_and_no_zero_defaults():
    for command in ("install", "rollback", "check", "fleet", "explain"):
        text = CliRunner().invoke(_app(), [command, "--help"], env={"COLUMNS": "120"}).output
        assert not re.search(r"<(str|float|int)>", text), (command, text)
        assert "[default: 0]" not in text and "[default: 0.0]" not in text, (command, text)
    install = CliRunner().invoke(_app(), ["install", "--help"], env={"COLUMNS": "120"}).output
    assert "--cuda-home DIR" in install and "--version X.Y.Z" in install and "--lock-wait S" in install


def test_top_level_examples_fit_an_80_column_terminal():
    text = CliRunner().invoke(_app(), ["--help"], env={"COLUMNS": "80"}).output
    examples = text.split("Examples:", 1)[1].split("Options:", 1)[0]
    lines = [line for line in examples.splitlines() if line.strip()]
    assert lines and all(line.lstrip().startswith("cudnn-doctor ") for line in lines), examples


def test_under_root_the_by_hand_way_names_the_roots_files_and_link_targets_stay():
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies import reinstall_fix
    from cudnn_doctor.remedies.acting import building_for
    from cudnn_doctor.remedies.loader import libcuda_link_fix
    from facts_factory import cudnn_copy

    with building_for(Target(root="/mnt/node7")):
        fix = reinstall_fix(load_compat(), cudnn_copy("/usr/local/cuda/lib64", "9.1.0", "12.4", origin="toolkit"))
        link = libcuda_link_fix("/usr/lib/x86_64-linux-gnu/libcuda.so.1", wsl=False)
    assert fix.text.endswith("/mnt/node7/usr/local/cuda/lib64/ && sudo ldconfig -r /mnt/node7")
    assert link.commands == ["sudo mkdir -p /mnt/node7/usr/local/lib/cuda-link",  # a link's target stays the root's view
                             "sudo ln -sf /usr/lib/x86_64-linux-gnu/libcuda.so.1 "
                             "/mnt/node7/usr/local/lib/cuda-link/libcuda.so",
                             "export LD_LIBRARY_PATH=/usr/local/lib/cuda-link${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"]
