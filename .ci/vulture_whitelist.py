"""What vulture cannot see being used: names read by JSON serialisation, by the standard library or by a library."""
# ruff: noqa
# mypy: ignore-errors
_ = object()

# Fact and result fields: every dataclass field reaches the --json report through dataclasses.asdict (model.py,
# results.py) and the published schema (schema/*.json), so no Python code has to read it.
_.nvml_error_code
_.nvcc_path
_.bundled_driver
_.cache_entries
_.cache_mtime
_.cudnn_soname_source
_.backends
_.include_path_from
_.library_path_from
_.load_via
_.nvidia_modprobe
_.nvswitches
_.fabric_manager
_.require_cuda
_.cudnn_local_repos
_.cudnn_packages
_.driver_upgrades_since_boot
_.framework_libraries
_.architecture
_.node_source
_.path_absent
_.failed_call
_.max_rel_error
_.health_error
_.acs_unreadable
_.seed_raw
_.seed_source
_.timing
_.child_timings_ms
_.recovered
_.loader_cache
_.elf_class  # readers/elf.py's ElfInfo: the class (32/64-bit) the header names, beside the status it decides

# TypedDict keys, read by subscript (readers/headers.py CudnnHeader["max_sm"]).
_.max_sm

# Knowledge rows built from compat/*.toml with every key of the row (knowledge/cudnn.py CudnnBuild).
_.cuda_update

# Read by a library: pynvml loads the library set here (native/child_nvml.py); shlex reads whitespace and
# whitespace_split (readers/theano_config.py); zipfile calls seekable and tell on the range reader (refresh/fetch.py).
_.nvmlLib
_.whitespace
_.whitespace_split
_.seekable
_.tell

# The module __getattr__ (PEP 562) of cli.py: `from cudnn_doctor.cli import app` builds the app on first use.
__getattr__

# The version validator's driver-branch question (knowledge/exists.py): builders name driver branches from the
# architecture and toolkit tables it is built on; tests/remedies/test_fixes_name_what_exists.py asks it of every fix.
_.driver_branch_exists

# Read from the report's JSON (GpuReady.phases_ms: each readiness step's time), never as an attribute here.
_.phases_ms

# Compat's typed accessors whose methods callers reach only through the facade's forwarders (forward() finds each
# domain by its class in Compat.domains).
_.lookups
_.pastes
_.features

# explain.paste_facts: facts the paste states that no answer reads yet (issue 44: every version the text carries is
# read, with its span; tests/explain/test_paste_facts.py reads them).
_.cuda_paths
_.cudnn_compiled
_.cudnn_loaded
_.folder_of
