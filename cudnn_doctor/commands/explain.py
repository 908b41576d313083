"""The `explain` subcommand: recognise a pasted framework error, say what it means, run the checks that decide it."""
from __future__ import annotations

import re
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit


@dataclass
class SymptomMatch:
    """One routing-table row (compat/symptoms.toml) that the pasted text matched."""

    id: str
    pattern: str  # the pattern that matched
    meaning: str
    catalogue: List[str]
    rules: List[str]


def match_symptoms(text: str, compat=None) -> List[SymptomMatch]:
    """Every symptom row whose patterns occur in `text`, in table order. Pure: no machine access."""
    from ..knowledge import load_compat

    compat = compat or load_compat()
    out: List[SymptomMatch] = []
    for symptom in compat.symptoms():
        hit = symptom.matches(text or "")
        if hit:
            out.append(SymptomMatch(symptom.id, hit, symptom.meaning, symptom.catalogue, symptom.rules))
    return out


def routed_rules(matches: List[SymptomMatch]) -> List[str]:
    """The rule ids to run, each once, in the order the matches name them."""
    return list(dict.fromkeys(r for m in matches for r in m.rules))


SONAME_RE = re.compile(r"lib[\w.+-]+\.so(?:\.\d+)*")
DLL_RE = re.compile(r"\w+64_\d+\.dll", re.I)
_MAX_NAMES = 8


@dataclass
class LibraryCheck:
    """What the loader does with one library name from the pasted text, and what else is installed."""

    name: str
    found: Optional[str] = None  # the path the loader settles on
    via: Optional[str] = None
    error: Optional[str] = None  # the loader stops at `found` and fails
    installed: List[str] = field(default_factory=list)  # other copies/versions that provide this library
    problem: bool = False
    message: str = ""
    fix: str = ""


def extract_sonames(text: str) -> List[str]:
    """Library names in pasted text, in order, once each: 'libcudart.so.11.0', 'libcudnn.so', 'cudart64_110.dll'.
    Pure: no machine access."""
    names: List[str] = []
    for m in sorted(list(SONAME_RE.finditer(text or "")) + list(DLL_RE.finditer(text or "")), key=lambda m: m.start()):
        if m.group(0) not in names:
            names.append(m.group(0))
    return names[:_MAX_NAMES]


def _split(name: str) -> Tuple[str, str]:
    """'libcudart.so.11.0' -> ('libcudart', '11.0'); 'libnvrtc.so' -> ('libnvrtc', '')."""
    stem, _, rest = name.partition(".so")
    return stem, rest.lstrip(".")


def _is_toolkit_lib(stem: str) -> bool:
    """A library the CUDA toolkit ships (libcudart, libcublas, libnvrtc...), not the driver's or cuDNN's."""
    return (stem.startswith("libcu") or stem.startswith("libnv")) and stem not in ("libcuda", "libnvidia-ml") and \
        not stem.startswith("libcudnn") and not stem.startswith("libnvidia")


def _installed(facts, name: str) -> List[str]:
    """Copies and toolkits on this machine that provide some version of `name`'s library."""
    stem, _ = _split(name)
    out: List[str] = []
    roots: List[str] = []  # folders already described, so a resolved file inside one is not listed twice
    if stem.startswith("libcudnn"):
        for copy in facts.cudnn:
            soname = "%s.so.%s" % (stem, copy.major) if copy.major is not None else stem + ".so"
            out.append("cuDNN %s (%s) at %s" % (copy.version or "?", soname, copy.directory))
            roots.append(copy.directory)
    elif _is_toolkit_lib(stem):
        for tk in facts.toolkits:
            if tk.dangling or tk.kind == "pip" or not tk.version:
                continue
            own = (" (%s)" % tk.cudart_soname) if stem == "libcudart" and tk.cudart_soname else ""
            out.append("CUDA %s%s at %s" % (tk.version, own, tk.path))
            roots += [r for r in (tk.path, tk.realpath) if r]
    elif stem == "libcuda" and facts.driver.libcuda_path:
        out.append("driver %s (libcuda.so.1) at %s" % (facts.driver.version or "?", facts.driver.libcuda_path))
        roots.append(facts.driver.libcuda_path)
    for other, res in sorted(facts.loader.resolved.items()):
        if other == name or _split(other)[0] != stem or not res.path:
            continue
        if any(p and (p == r or p.startswith(r.rstrip("/") + "/")) for p in (res.path, res.realpath) for r in roots):
            continue
        out.append("%s at %s" % (other, res.path))
    return out


def _cuda_for_soname(compat, facts, stem: str, version: str) -> Optional[str]:
    """The newest CUDA release whose library carries this soname version (preferring one this driver runs)."""
    from ..queries import driver_version, platform_of

    first = version.split(".")[0] if version else ""
    if not first.isdigit():
        return None
    if stem == "libcudart":
        want = [c for c in compat.cuda_releases() if compat.cudart_soname(c) == "libcudart.so." + version]
    else:
        want = [c for c in compat.cuda_releases() if c.split(".")[0] == first]
    runs = [c for c in want if compat.driver_runs_cuda(driver_version(facts) or "", c, platform_of(facts),
                                                         facts.driver.cuda_version)[0] is not False]
    return (runs or want or [None])[-1]


def _tf_and_cuda(compat, facts) -> str:
    """For an installed TensorFlow that has NVIDIA's [and-cuda] wheels (Linux, per compat), the pinned reinstall
    that brings the cuDNN it was built with; empty otherwise."""
    from ..versions import ver
    from ..queries import framework_kind, platform_of

    fw = next((f for f in facts.python.frameworks if framework_kind(f) == "tensorflow"), None)
    if fw is None or platform_of(facts) != "linux":
        return ""
    version = fw.version.split("+")[0]
    since = ver(compat.framework_table("tensorflow_linux").get("pip_wheels_from"))
    if since is None or ver(version) is None or ver(version) < since:
        return ""
    return 'pip install "tensorflow[and-cuda]==%s"   (TensorFlow %s with the cuDNN and CUDA wheels it was built ' \
           'with)' % (version, version)


def _library_fix(compat, facts, name: str) -> str:
    from ..queries import machine_cuda
    from ..remedies import cudnn_dir_fix, driver_upgrade_fix, machine_cudnn_fix, toolkit_install_fix

    stem, version = _split(name)
    here = machine_cuda(facts, compat)
    if stem.startswith("libcudnn"):
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else None
        same = [c for c in facts.cudnn if major is not None and c.major == major]
        if same:
            return "cuDNN %s is installed at %s but not on the search path: %s" % (
                same[0].version or major, same[0].directory, cudnn_dir_fix(same[0].directory))
        tf = _tf_and_cuda(compat, facts)
        if tf:
            return tf
        if major is None:
            return "install cuDNN for CUDA %s: %s" % (here or "?", machine_cudnn_fix(facts, compat, here))
        if here and compat.newest_cudnn_build(here, major) is None:
            have = sorted({c.major for c in facts.cudnn if c.major is not None})
            return ("compat knows no cuDNN %d build for CUDA %s: install the failing program's build for this "
                    "machine (CUDA %s%s) instead" % (major, here, here, (", cuDNN %s" % "/".join(
                        str(h) for h in have)) if have else ""))
        return "install cuDNN %d for CUDA %s: %s" % (major, here or "?", machine_cudnn_fix(facts, compat, here, major))
    if stem == "libcuda":
        return driver_upgrade_fix("a current release") + "; inside a container, start it with `--gpus all`"
    if _is_toolkit_lib(stem):
        cuda = _cuda_for_soname(compat, facts, stem, version)
        if cuda:
            other = [t.version for t in facts.toolkits if t.version and not t.dangling and t.kind != "pip"]
            fix = "install the CUDA %s runtime it was built for (%s)" % (cuda, toolkit_install_fix(facts, compat, cuda))
            if other:
                fix += ", or install the failing program's build for the installed CUDA %s" % ", ".join(other)
            return fix
    return ("find the file with `find / -name '%s*' 2>/dev/null`, write the folder it prints into "
            "/etc/ld.so.conf.d/%s.conf and run `sudo ldconfig`; or install the package that provides it" % (
                name, stem.replace("lib", "", 1) or "extra"))


def check_libraries(names: List[str], facts, compat, resolve: Optional[Callable[[str], Any]] = None
                    ) -> List[LibraryCheck]:
    """For each library name: where the loader resolves it (the probes' answer, else `resolve`), which other
    versions this machine has, and the fix when it is missing. Pure given `resolve`."""
    out: List[LibraryCheck] = []
    for name in names:
        check = LibraryCheck(name=name)
        if name.lower().endswith(".dll"):
            check.message = ("%s is a Windows DLL: Windows looks for it next to the program and on PATH; "
                             "cudnn-doctor inspects Linux library paths only" % name)
            check.fix = ("put the bin folder of the CUDA/cuDNN release that ships %s on PATH (`where %s` in cmd "
                         "shows whether one is found)" % (name, name))
            out.append(check)
            continue
        res = facts.loader.resolved.get(name)
        if res is None and resolve is not None:
            res = resolve(name)
        check.installed = _installed(facts, name)
        if res is not None and res.path:
            check.found, check.via, check.error = res.path, res.via, res.error
            if res.error:
                check.problem = True
                check.message = "%s resolves to %s (via %s), but loading stops there: %s" % (
                    name, res.path, res.via or "?", res.error)
                check.fix = "replace the broken file %s (reinstall the package that owns it: `dpkg -S %s`)" % (
                    res.realpath or res.path, res.realpath or res.path)
            else:
                check.message = ("%s resolves to %s (via %s) here, so the failing program runs with another "
                                 "environment (LD_LIBRARY_PATH, venv, container)" % (name, res.path, res.via or "?"))
                check.fix = "run `cudnn-doctor check` in the failing program's own shell, venv or container"
            out.append(check)
            continue
        if res is None:
            check.message = "cannot tell where the loader finds %s" % name
            out.append(check)
            continue
        check.problem = True
        check.message = "%s is not on the search path; %s" % (
            name, ("installed: %s" % "; ".join(check.installed)) if check.installed else
            "no version of it is installed")
        check.fix = str(_library_fix(compat, facts, name))  # a Fix from the remedies module reads as its line
        out.append(check)
    return out


def _loader_resolver(root: str) -> Callable[[str], Any]:
    """Resolve names the probes did not ask about, the way a plain process under `root` would."""
    from ..host import Host
    from ..probes.loader import LoaderView

    view: List[Any] = []

    def resolve(name: str):
        if not view:
            view.append(LoaderView(Host(root)))
        return view[0].resolve(name)

    return resolve


def _read_text(text: Optional[str], file: Optional[str]) -> str:
    if file:
        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError as exc:
            error_exit("cannot read %s: %s" % (file, exc.strerror or exc))
    if text == "-" or (text is None and not sys.stdin.isatty()):
        return sys.stdin.read()
    return text or ""


def _run_checks(rules: List[str], root: str) -> Optional[Dict[str, Any]]:
    """The findings of the routed rules on this machine."""
    from ..diagnose import collect_report

    report = collect_report(root=root)
    wanted = set(rules)
    relevant = [f for f in report.findings if f.id in wanted]
    return {"findings": relevant, "ran": [r for r in rules if r in report.rules_run], "facts": report.facts}


def _render_libraries(con, libraries: List[LibraryCheck]) -> None:
    if not libraries:
        return
    con.print("\nLibraries named in the text, on this machine:", markup=False)
    for lib in libraries:
        con.print("  %s %s" % ("ERROR" if lib.problem else "INFO ", lib.message), markup=False)
        if lib.fix:
            con.print("    fix: %s" % lib.fix, markup=False)


def _render(matches: List[SymptomMatch], checks: Optional[Dict[str, Any]], ran_checks: bool,
            libraries: Optional[List[LibraryCheck]] = None) -> None:
    from rich.markup import escape

    from ..ui import console

    con = console()
    libraries = libraries or []
    if not matches:
        con.print("No known CUDA/cuDNN error pattern matched this text.", markup=False)
        _render_libraries(con, libraries)
        con.print("Run `cudnn-doctor check` for a full diagnosis of this machine.", markup=False)
        return
    for m in matches:
        con.print("[bold]%s[/bold]  (matched %r)" % (escape(m.id), escape(m.pattern)))
        con.print("  " + m.meaning, markup=False)
        con.print("  failure catalogue: %s; checks: %s" % (", ".join(m.catalogue), ", ".join(m.rules) or "none "
                                                          "(needs a GPU or the failing program to observe)"),
                  markup=False)
    if not ran_checks:
        return
    if checks is None:
        con.print("\nThe check command is not available in this build; run `cudnn-doctor check`.", markup=False)
        return
    findings = checks["findings"]
    con.print("\nOn this machine (%s):" % ", ".join(checks["ran"]), markup=False)
    problems = [f for f in findings if f.severity.value != "info"] + [lib for lib in libraries if lib.problem]
    if not problems and not findings:
        con.print("  None of these checks found a problem here. Run the failing program's environment through "
                  "`cudnn-doctor check` (same shell, venv and LD_LIBRARY_PATH); out-of-memory and crashes need the "
                  "GPU at work to show.", markup=False)
    elif not problems:
        # Information from a check this error routes to is the lead here (no cuDNN at all behind
        # CUDNN_STATUS_NOT_INITIALIZED, say), though `check` alone would not call it a problem.
        con.print("  No warning or error, but what these checks saw bears on this error:", markup=False)
    for f in findings:
        con.print("  %s %s %s" % (f.severity.value.upper(), f.id, f.title), markup=False)
        if f.fix and (f.severity.value != "info" or not problems):
            con.print("    fix: %s" % f.fix, markup=False)
    _render_libraries(con, libraries)


def register(app: typer.Typer) -> None:
    @app.command(
        "explain",
        help=(
            "Explain a pasted CUDA/cuDNN error message and run the checks that decide it on this machine.\n\n"
            "Library names in the text (libcudart.so.11.0, cudnn64_8.dll) are looked up on this machine: where "
            "the loader finds each, and which other versions are installed.\n\n"
            "Exit codes: 0 no routed check found an error, 1 one did (or a named library is missing), 2 usage "
            "error.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor explain \"Could not load library libcudnn_ops_infer.so.8\"\n\n"
            "  python train.py 2>&1 | cudnn-doctor explain -\n\n"
            "  cudnn-doctor explain --file error.log --no-check"
        ),
    )
    def explain(
        text: Optional[str] = typer.Argument(None, metavar="ERROR_TEXT", help="The error text, or - for stdin."),
        file: Optional[str] = typer.Option(None, "--file", metavar="PATH", help="Read the error text from a file."),
        no_check: bool = typer.Option(False, "--no-check", help="Only explain; do not inspect this machine."),
        root: str = typer.Option("/", "--root", metavar="DIR", help="Inspect the filesystem under DIR."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        from ..bounded_io import not_a_folder

        if not_a_folder(root):
            error_exit("--root %s %s" % (root, not_a_folder(root)))
        body = _read_text(text, file)
        if not body.strip():
            if text == "-":
                error_exit("stdin (-) was empty: pipe the failing program's output, e.g. "
                           "python train.py 2>&1 | cudnn-doctor explain -")
            if file:
                error_exit("--file %s is empty: give the file that holds the error text" % file)
            error_exit("give the error text as an argument, with --file PATH, or on stdin (-)")
        from ..knowledge import load_compat

        compat = load_compat()
        matches = match_symptoms(body, compat)
        names = extract_sonames(body)
        checks = _run_checks(routed_rules(matches), root) if (matches or names) and not no_check else None
        libraries: List[LibraryCheck] = []
        if checks is not None and names:
            libraries = check_libraries(names, checks["facts"], compat, _loader_resolver(root))
        code = EXIT_OK
        if checks and (any(f.severity.value == "error" for f in checks["findings"]) or
                       any(lib.problem for lib in libraries)):
            code = EXIT_PROBLEMS
        if as_json:
            from ..model import to_plain
            from ..render.envelope import dumps, envelope

            payload = {"matches": [asdict(m) for m in matches], "rules": routed_rules(matches),
                       "libraries_named": names}
            if checks is not None:
                payload["findings"] = to_plain(checks["findings"])
                payload["checks_ran"] = checks["ran"]
                payload["libraries"] = [asdict(lib) for lib in libraries]
            sys.stdout.write(dumps(envelope("explain", code, **payload)) + "\n")
        else:
            _render(matches, checks, ran_checks=bool(matches) and not no_check, libraries=libraries)
        raise typer.Exit(code)
