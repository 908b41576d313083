"""The building blocks of fixes: Fix values from commands and words, composed in order, and the shell lines
(quoting, LD_LIBRARY_PATH, ld.so.conf.d files, links) every remedy writes the same way."""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
from typing import Any, Iterable, List, Sequence, Set, Union

from ..model import Facts, Fix
from ..queries import listed_in_ld_conf, own_cudnn_wheel_dir
from .acting import at, ldconfig, sudo, target_shell
from .shells import command_fix, either_shell, needs_root, sh_quote


def run(*commands: str, text: str = "", manual: str = "", writes: Sequence[str] = (), shell: str = "",
        alternatives: Sequence[str] = ()) -> Fix:
    """A fix that is exactly these commands, run in order (the line shows them as ``shell`` runs them: by default
    sh, or the Target's where every command reads the same in either shell, such as a pip line; a ``text`` that
    names other ways names their commands in ``alternatives``)."""
    shell = shell or (target_shell() if either_shell(commands) else "sh")
    return command_fix(commands, shell=shell, text=text, manual=manual, writes=writes, alternatives=alternatives)


def said(template: str, *commands: str, manual: str = "") -> Fix:
    """A fix said in words that name commands: each %s of ``template`` is the next of ``commands``, which are the
    fix's commands, in that order (one named twice runs once)."""
    return run(*dict.fromkeys(commands), text=template % commands, manual=manual)


def stated(text: str) -> Fix:
    """A fix whose one line is the whole of it: the words are not split into commands and a manual way."""
    return Fix(text=text)


def advice(text: str) -> Fix:
    """A fix no command can make (a choice, a download, hardware): said in words."""
    return Fix(text=text, manual=text)


Part = Union[Fix, str, int, float, None]


def say(template: str, *parts: Part) -> Fix:
    """`template` filled with `parts`; the commands of the Fix parts run one after another, in their order."""
    fixes: List[Fix] = [p for p in parts if isinstance(p, Fix)]
    text = template % tuple(p.text if isinstance(p, Fix) else p for p in parts) if parts else template
    if not fixes:
        return advice(text)
    commands = [c for f in fixes for c in f.commands]
    return Fix(text=text, commands=commands, root=any(f.root for f in fixes) or needs_root(commands),
               # a part only sh runs (sudo, $VAR) makes the whole sh's, though another part reads alike in both
               shell="sh" if any(f.shell == "sh" for f in fixes) else next((f.shell for f in fixes if f.shell),
                                                                             "sh" if commands else ""),
               doctor=next((f.doctor for f in fixes if f.doctor), ""),
               manual="; then ".join(f.manual for f in fixes if f.manual),
               writes=[w for f in fixes for w in f.writes], alternatives=[c for f in fixes for c in f.alternatives])


def or_else(main: Fix, alternative: Part, template: str = "%s   (or %s)") -> Fix:
    """`main`, with another way to the same end said after it: its commands are the fix's alternatives, run instead
    of the fix's own, never after them (an alternative in plain words names no command)."""
    other = alternative.text if isinstance(alternative, Fix) else str(alternative)
    manual = "; ".join(filter(None, (main.manual, other)))
    instead = list(alternative.commands) + list(alternative.alternatives) if isinstance(alternative, Fix) else []
    return Fix(text=template % (main.text, other), commands=list(main.commands), root=main.root, shell=main.shell,
               doctor=main.doctor, manual=manual, writes=list(main.writes),
               alternatives=list(main.alternatives) + instead)


def then(*steps: Fix, joint: str = "; then ") -> Fix:
    """The steps one after the other."""
    return say(joint.replace("%", "%%").join(["%s"] * len(steps)), *steps)


def noted(fix: Fix, note: str) -> Fix:
    """The same fix with a note said after its line (the note's words run nothing)."""
    return dataclasses.replace(fix, text=fix.text + note) if note else fix


def capitalized(fix: Fix) -> Fix:
    """The same fix, its line starting with a capital letter (it opens the report's Fix: line)."""
    return dataclasses.replace(fix, text=fix.text[:1].upper() + fix.text[1:])


def q(path: Any) -> str:
    """A path (or any word) quoted for a POSIX shell, so fixes survive spaces and metacharacters."""
    return sh_quote(path)


def qs(paths: Iterable[Any]) -> str:
    """Several paths, each quoted, separated by spaces."""
    return " ".join(q(p) for p in paths)


def export_path_line(entries: Sequence[str]) -> str:
    """`export LD_LIBRARY_PATH=...` with the value quoted (or `unset` when nothing is left)."""
    if not entries:
        return "unset LD_LIBRARY_PATH"
    return "export LD_LIBRARY_PATH=%s" % q(":".join(entries))


_KEEP_LD_PATH = "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"


# The site-packages folder of the Python the user runs, asked of it when the line runs: a paste names no environment.
ACTIVE_SITE = "$(python -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))')"


def prepend_ld_path(directory: str) -> str:
    """The export line that puts `directory` first on LD_LIBRARY_PATH, keeping what is there (a folder under
    ACTIVE_SITE keeps the substitution live, inside double quotes)."""
    if directory.startswith(ACTIVE_SITE + "/") and re.fullmatch(r"[\w./-]*", directory[len(ACTIVE_SITE):]):
        return 'export LD_LIBRARY_PATH="%s"%s' % (directory, _KEEP_LD_PATH)
    return "export LD_LIBRARY_PATH=%s%s" % (q(directory), _KEEP_LD_PATH)


def prepends_ld_path(fix: Fix) -> bool:
    """Whether ``fix`` itself puts a folder first on LD_LIBRARY_PATH (a line prepend_ld_path wrote)."""
    return any(c.startswith("export LD_LIBRARY_PATH=") and c.endswith(_KEEP_LD_PATH) for c in fix.commands)


def ld_conf_name(directory: str) -> str:
    """A /etc/ld.so.conf.d file name of this folder's own, so registering it never overwrites another file."""
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", directory).strip("-.") or "root"
    return "/etc/ld.so.conf.d/cudnn-doctor-%s.conf" % slug


def in_folder(directory: str, *commands: str) -> Fix:
    """Commands run inside a library folder, then the loader cache rebuilt (links and files changed there)."""
    return run("cd %s" % q(at(directory)), *commands, ldconfig())


def relink_fix(directory: str, links: Sequence[Sequence[str]]) -> Fix:
    """Point each (target, link name) soname link in `directory` at its file again."""
    return in_folder(directory, *(sudo("ln -sf %s %s" % (q(target), q(name))) for target, name in links))


def remove_files_fix(directory: str, names: Sequence[str]) -> Fix:
    return in_folder(directory, sudo("rm %s" % qs(names)))


def readable_fix(files: Iterable[str], folders: Iterable[str], unknown: Iterable[str]) -> Fix:
    """Let other users read `files` and enter `folders`; for `unknown`, show the modes along the way first."""
    commands = []
    if files:
        commands.append(sudo("chmod a+r %s" % qs(at(f) for f in sorted(files))))
    if folders:
        commands.append(sudo("chmod o+x %s" % qs(at(f) for f in sorted(folders))))
    text = " && ".join(commands)
    if unknown:
        look = "namei -l %s" % qs(at(u) for u in sorted(unknown))
        commands.append(look)
        text = " && ".join(filter(None, (text, look + "   (then `%s` the folder shown without x for others)"
                                         % sudo("chmod o+x"))))
    return run(*commands, text=text)


def ld_conf_fix(directory: str) -> Fix:
    """Register a folder with the loader in a file named after it, then rebuild the cache."""
    conf = at(ld_conf_name(directory))  # the folder is written as the root's programs see it, into the root's file
    return run("echo %s | %s > /dev/null" % (q(directory), sudo("tee %s" % q(conf))), ldconfig(), writes=[conf])


_DROP_LD_PATH = "export LD_LIBRARY_PATH=\"$(printf %s \"${LD_LIBRARY_PATH:-}\" | tr : '\\n' | grep -vxF "


def drops_ld_path(command: str) -> bool:
    """Whether the command takes entries off LD_LIBRARY_PATH (a line ld_library_path_without wrote, or unset)."""
    return command.startswith(_DROP_LD_PATH) or command == "unset LD_LIBRARY_PATH"


def dropped_ld_entries(fix: Fix) -> Set[str]:
    """The folders the fix's ld_library_path_without lines take off LD_LIBRARY_PATH (their `-e FOLDER` words, as
    the shell reads them), normalised."""
    return {os.path.normpath(e) for c in fix.commands if drops_ld_path(c) and "grep -vxF" in c
            for e in dropped_entries(c)}


def dropped_entries(line: str) -> List[str]:
    """The folders one ld_library_path_without line drops (its `-e FOLDER` words), as the shell reads them."""
    try:
        words = shlex.split(line.split("grep -vxF", 1)[1].rsplit(" | paste", 1)[0])
    except ValueError:  # a quote shlex cannot close: nothing read, so nothing is judged stranded by this line
        return []
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-e"]


def drops_preload(command: str) -> bool:
    """Whether the command takes a preload away (a line remedies.preloads wrote): LD_PRELOAD unset or set to fewer
    entries, or a line deleted from /etc/ld.so.preload."""
    return command == "unset LD_PRELOAD" or command.startswith("export LD_PRELOAD=") or (
        "sed -i " in command and command.rstrip("'\"").endswith("ld.so.preload"))


def ld_library_path_without(facts: Facts, entries: Iterable[str]) -> Fix:
    """The `export` line that drops `entries` (each as the environment spells it) from LD_LIBRARY_PATH as the shell
    has it when the line runs: a value written out from the environment as found would undo another fix's export
    run before it (draws 31337/36, /49: a wheel folder put first, then `unset LD_LIBRARY_PATH`)."""
    drop = {os.path.normpath(e) for e in entries}
    spelled = [d for d in facts.loader.ld_library_path if os.path.normpath(d) in drop] or sorted(drop)
    return run(drop_ld_path_line(spelled), *(prepend_ld_path(d) for d in _plain_path_wheel_folders(facts, drop)),
               shell="sh")


def drop_ld_path_line(entries: Sequence[str]) -> str:
    """The export line that takes these entries, spelled as given, off LD_LIBRARY_PATH as the shell has it then."""
    return _DROP_LD_PATH + " ".join("-e %s" % q(d) for d in dict.fromkeys(entries)) + " | paste -sd: -)\""


def _plain_path_wheel_folders(facts: Facts, dropped: Set[str]) -> List[str]:
    """The own cuDNN wheel folders of frameworks that search only the plain path (ONNX Runtime, CuPy 13: their
    library has no RPATH into it) and got their cuDNN from a dropped folder: put first instead, or dropping the
    folder leaves them none (draw 271127/311: torch's CD709 dropped a conda folder ONNX Runtime loaded from)."""
    out = []
    for fw in facts.python.frameworks:
        res, own = fw.resolved_cudnn, own_cudnn_wheel_dir(fw)
        if res is None or not res.path or res.via != "LD_LIBRARY_PATH" or fw.library_search_path is None or \
                os.path.normpath(os.path.dirname(res.path)) not in dropped or own in fw.library_search_path:
            continue
        major = res.name.rsplit(".", 1)[-1]
        if any(os.path.normpath(c.directory) == own and str(c.major) == major for c in facts.cudnn):
            out.append(own)
    return list(dict.fromkeys(out))


def loader_dir_fix(facts: Facts, directory: str) -> Fix:
    """Let the loader find a folder's libraries: rebuild the cache where the configuration already lists the folder
    (rewriting the file would change nothing), else register it in a file of its own."""
    listed = listed_in_ld_conf(facts, directory)
    if listed:
        return run(ldconfig(), text="%s   (the loader's configuration already lists %s; only its cache lacks the "
                                    "libraries)" % (ldconfig(), listed))
    return or_else(ld_conf_fix(directory), run(prepend_ld_path(directory)))


def unregister_fix(directory: str) -> Fix:
    """Take a folder out of the loader's configuration (which file lists it is for the user to see)."""
    return said("remove %s from %s/* and run `%%s`" % (directory, at("/etc/ld.so.conf.d")), ldconfig())


def cudnn_dir_fix(directory: str) -> Fix:
    return or_else(ld_conf_fix(directory), said("for one shell: %s", prepend_ld_path(directory)), "%s   (or, %s)")


def folder_arg(directory: str) -> str:
    """A folder as the last argument of `cp`: one trailing slash, never two."""
    return directory.rstrip("/") + "/"

