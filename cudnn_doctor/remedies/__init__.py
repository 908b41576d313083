"""Remedies: every fix as a Fix value, rendered per shell. Import queries, knowledge and model, never the machine.

Rules say what is wrong and which remedy applies; everything that writes shell (quoting, loader registration,
package names per channel, the cudnn-doctor command that does the repair) lives here, so every fix can be checked
for being runnable as printed (tests/remedies/test_fixes_runnable.py)."""
from .cudnn import (
    copy_wheel, cudnn_install_fix, cudnn_into_toolkit, cudnn_wheel_for, doctor_install, doctor_reinstall,
    header_fix, interrupted_install_fix, machine_cudnn_fix, reinstall_fix, with_doctor)
from .onnxruntime import onnxruntime_cuda_fix
from .shell import (
    advice, capitalized, cudnn_dir_fix, export_path_line, folder_arg, in_folder, ld_conf_fix, ld_conf_name,
    ld_library_path_without, loader_dir_fix, noted, or_else, prepend_ld_path, q, qs, readable_fix, relink_fix,
    remove_files_fix, run, say, stated, then, unregister_fix)
from .theano import (
    theano_cudnn_choice, theano_dev_link_fix, theano_device_fix, theano_flags_line, theano_setting_fix,
    theano_without_cudnn)
from .software import (
    arch_driver_limit, driver_or_older_image_fix, driver_upgrade_fix, jax_install, nvrtc_install_fix,
    toolkit_install_fix, torch_install, torch_variant_tag)

__all__ = [
    "advice", "arch_driver_limit", "capitalized", "copy_wheel", "cudnn_dir_fix", "cudnn_install_fix",
    "cudnn_into_toolkit", "cudnn_wheel_for", "doctor_install", "doctor_reinstall", "driver_or_older_image_fix",
    "driver_upgrade_fix", "export_path_line", "folder_arg", "header_fix", "in_folder", "interrupted_install_fix",
    "jax_install", "ld_conf_fix", "ld_conf_name", "ld_library_path_without", "loader_dir_fix", "machine_cudnn_fix",
    "noted", "nvrtc_install_fix", "onnxruntime_cuda_fix", "or_else", "prepend_ld_path", "q", "qs", "readable_fix",
    "reinstall_fix", "relink_fix", "remove_files_fix", "run", "say", "stated", "theano_cudnn_choice",
    "theano_dev_link_fix", "theano_device_fix", "theano_flags_line", "theano_setting_fix", "theano_without_cudnn",
    "then", "toolkit_install_fix", "torch_install", "torch_variant_tag", "unregister_fix", "with_doctor"
]
