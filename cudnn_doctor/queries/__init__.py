"""Questions about the facts (which copy a process loads, which GPUs count, which toolkit builds use); pure functions.

Knowledge (compat) is passed in by the caller where a question needs it; nothing here reads the machine. Asked as
``queries.NAME`` by rules, remedies, explain and the renderers; each question lives in the module of what it asks
about: the machine (machine.py), the GPUs (gpus.py), the cuDNN copies (copies.py), and the framework and cuDNN
choices the knowledge answers (choices.py)."""
from __future__ import annotations

from .machine import (platform_of, driver_version, driver_cuda, has_driver, driver_place, primary_toolkit,
                      toolkit_owning, machine_cuda, ld_entry_for, folder_aliases, listed_in_ld_conf, package_channel)
from .gpus import (visible_gpus, gpus_with_cc, known_cc, cc_below, GpuGroup, gpu_groups, gpu_label, floor_branch,
                   gpu_cudnn_problems, lowest_cc)
from .copies import (same_file, working_copy, copy_for_path, plain_resolutions, loaded_cudnn, consumers, used_copies,
                     is_used, is_pip_dir, distro_lib_dir, describe_copy, missing_sublibraries, in_environment_of,
                     environment_prefix, owning_environment, site_wheels, built_cuda_major)
from .choices import (framework_kind, framework_label, without_environment, own_cudnn_wheel_dir, cudnn_pin_floor,
                      compiled_cudnn, cudnn_older, best_torch_variant, cudnn_build_exists, cudnn_runs_on_cc,
                      cudnn_release_for, jax_choice)

__all__ = ["best_torch_variant", "built_cuda_major", "cc_below", "compiled_cudnn", "consumers", "copy_for_path",
           "cudnn_build_exists", "cudnn_older", "cudnn_pin_floor", "cudnn_release_for", "cudnn_runs_on_cc",
           "describe_copy", "distro_lib_dir", "driver_cuda", "driver_place", "driver_version", "environment_prefix",
           "floor_branch", "folder_aliases", "framework_kind", "framework_label", "gpu_cudnn_problems", "gpu_groups",
           "gpu_label", "GpuGroup", "gpus_with_cc", "has_driver", "in_environment_of", "is_pip_dir", "is_used",
           "jax_choice", "known_cc", "ld_entry_for", "listed_in_ld_conf", "loaded_cudnn", "lowest_cc", "machine_cuda",
           "missing_sublibraries", "own_cudnn_wheel_dir", "owning_environment", "package_channel",
           "plain_resolutions", "platform_of", "primary_toolkit", "same_file", "site_wheels", "toolkit_owning",
           "used_copies", "visible_gpus", "without_environment", "working_copy"]
