"""The driver, GPU, loader, toolkit and container builders on the branches the scenario machines rarely reach: each
returns the commands it says, with root where they need it."""
from __future__ import annotations

from cudnn_doctor.knowledge import DriverFloor
from cudnn_doctor.remedies.containers import image_on_node_fix, replace_wsl_linux_driver_fix
from cudnn_doctor.remedies.driver import compute_libraries_fix, known_bad_driver_fix, reinstall_driver_fix
from cudnn_doctor.remedies.gpu import exclusive_gpu_fix, jax_build_for_gpu_fix
from cudnn_doctor.remedies.loader import libcuda_link_fix, off_search_path_fix
from cudnn_doctor.remedies.toolkit import drop_compat_libcuda_on_804_fix
from facts_factory import real_machine
from shellcheck_kit import ld_library_path_after
import pytest

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")


def test_libcuda_of_the_loaded_module_branch_or_a_reinstall_when_the_branch_is_unknown():
    fix = compute_libraries_fix("550.54.15")
    assert fix.commands == ["sudo apt install libnvidia-compute-550", "sudo ldconfig", "nvidia-smi"] and fix.root
    assert "driver 550.54.15 with its package" in fix.manual
    assert compute_libraries_fix(None) == reinstall_driver_fix() == compute_libraries_fix("unknown")


def test_a_known_bad_driver_without_a_fixed_release_asks_for_a_newer_one():
    assert known_bad_driver_fix().text == "Upgrade the driver to a newer release or newer if you rely on it."
    assert known_bad_driver_fix("550.90.07").text.startswith("Upgrade the driver to 550.90.07 or newer")


def test_wsl_without_a_known_toolkit_package_purges_and_only_says_what_to_install():
    fix = replace_wsl_linux_driver_fix(None)
    assert fix.commands == ["sudo apt remove --purge 'nvidia-driver-*' 'libnvidia-compute-*'", "wsl --shutdown"]
    assert " ; then install the cuda-toolkit package of the CUDA version nvidia-smi prints" in fix.text
    with_package = replace_wsl_linux_driver_fix("cuda-toolkit-12-4")
    assert with_package.commands[-2] == "sudo apt install cuda-toolkit-12-4" and " && sudo apt install" in \
        with_package.text


def test_image_on_node_without_a_driver_floor_names_the_cuda_the_driver_must_support():
    fix = image_on_node_fix("node-a", None, "12.8", "12.2")
    assert fix.text.startswith("on node-a: Install or upgrade the NVIDIA driver to one that supports CUDA 12.8")
    assert fix.text.endswith("or use an image built for CUDA 12.2 or older (this one needs CUDA 12.8)")
    floor = DriverFloor(cuda="12.8", platform="linux", version="570.26")
    assert "driver to >= 570.26 " in image_on_node_fix(None, floor, "12.8", None).text


def test_jax_extra_after_a_driver_upgrade_when_that_extra_needs_one():
    row = {"extra": "cuda12", "min_cc": "5.2", "driver_linux": "525"}
    alone = jax_build_for_gpu_fix(row, False, "linux")
    assert alone.commands == ['pip install -U "jax[cuda12]"'] and not alone.root
    upgraded = jax_build_for_gpu_fix(row, True, "linux")
    assert upgraded.commands == ["sudo ubuntu-drivers install", "sudo reboot", 'pip install -U "jax[cuda12]"']
    assert "the R525 branch or later" in upgraded.text


def test_exclusive_gpu_names_a_free_gpu_even_when_it_is_gpu_0():
    fix = exclusive_gpu_fix(1, 0)
    assert fix.text.startswith("Use another GPU (export CUDA_VISIBLE_DEVICES=0), stop the process holding it")
    assert fix.commands == ["sudo nvidia-smi -i 1 -c DEFAULT"]
    assert exclusive_gpu_fix(0, None).text.startswith("Stop the process holding it")


def test_a_folder_leaves_the_search_path_where_it_entered_it():
    facts = real_machine()
    facts.loader.ld_library_path = ["/opt/compat", "/opt/other/lib"]
    off = off_search_path_fix(facts, "/opt/compat", "/opt/compat").commands
    assert len(off) == 1 and ld_library_path_after(off, facts.loader.ld_library_path) == ["/opt/other/lib"]
    registered = off_search_path_fix(facts, None, "/opt/compat")
    assert registered.commands == ["sudo ldconfig"] and "remove /opt/compat from /etc/ld.so.conf.d/*" in registered.text
    maybe = drop_compat_libcuda_on_804_fix(facts, "/opt/compat", "/opt/compat")
    assert maybe.text.startswith("If CUDA reports error 804: %s, and upgrade" % off[0])


def test_wsl_finds_the_unversioned_libcuda_in_its_driver_share():
    assert libcuda_link_fix("/usr/lib/wsl/lib/libcuda.so.1", True).commands == [
        "export LD_LIBRARY_PATH=/usr/lib/wsl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"]
    linked = libcuda_link_fix("/usr/lib/x86_64-linux-gnu/libcuda.so.1", False)
    assert linked.commands[1] == "ln -sf /usr/lib/x86_64-linux-gnu/libcuda.so.1 ~/.local/lib/cuda-link/libcuda.so"


def test_the_ptx_driver_fix_without_a_known_floor_still_reads_and_runs():
    """CD305 where the knowledge has no driver floor for the toolkit: words instead of a crash on None."""
    from cudnn_doctor.remedies.toolkit import exact_driver_for_ptx_fix

    fix = exact_driver_for_ptx_fix(None, "linux")
    assert "the toolkit's own driver release" in fix.text and "None" not in fix.text
    assert fix.commands == ["sudo ubuntu-drivers install", "sudo reboot"]


def test_a_reboot_is_said_for_the_user_it_is_for_root_without_sudo():
    """A driver/library mismatch and a GPU reset are the running machine's: `sudo` only where the user is not
    root (a root shell in a container often has no sudo at all)."""
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies.acting import building_for
    from cudnn_doctor.remedies.driver import mismatched_driver_fix
    from cudnn_doctor.remedies.node import drain_and_reset_fix

    assert mismatched_driver_fix("linux").commands == ["sudo ldconfig", "sudo reboot"]
    reset = drain_and_reset_fix([1])  # the reset, or else the reboot
    assert reset.commands == ["sudo nvidia-smi --gpu-reset -i 1"] and "(or sudo reboot)" in reset.text
    with building_for(Target(as_root=True)):
        assert mismatched_driver_fix("linux").commands == ["ldconfig", "reboot"]
        reset = drain_and_reset_fix([1])
        assert reset.commands == ["nvidia-smi --gpu-reset -i 1"] and "(or reboot)" in reset.text
        assert "sudo" not in reset.text
        assert "`reboot`" in mismatched_driver_fix("linux").text and "sudo" not in mismatched_driver_fix("linux").text
