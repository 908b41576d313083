"""`check --image REF [--against NODE.json]`: the image's layers read into a temporary root, its config's Env as
the environment, then judged alone or on the node whose saved report is given."""
from __future__ import annotations

import json
from typing import Optional, Sequence

from .. import diagnose
from ..results import Report
from ..ui import error_exit


def load_node(path: str):
    """The node a saved `check --json` report describes; a bad file is one line and exit 2."""
    from ..image import ImageError
    from ..image.node import node_from_report

    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read(64 << 20))
    except OSError as exc:
        error_exit("--against %s cannot be read: %s" % (path, exc.strerror or exc))
    except ValueError as exc:
        error_exit("--against %s is not JSON: %s" % (path, exc))
    try:
        return node_from_report(doc, path)
    except ImageError as exc:
        error_exit(str(exc))


def read_image_facts(ref: str, timeout: Optional[float]):
    """The image's facts (probes run over its unpacked layers with its Env); exits with one line when refused."""
    from ..image import ImageError, open_image

    try:
        with open_image(ref) as opened:
            facts = diagnose.collect_facts(opened.root, opened.env, timeout=timeout)
            facts.image = opened.facts
    except ImageError as exc:
        error_exit(str(exc))
    facts.host.root = opened.facts.reference  # the temporary folder is gone; the image is what was read
    return facts


def image_check(ref: str, against: Optional[str], requires: Sequence[str], target: Optional[str],
                skip: Sequence[str], timeout: Optional[float]) -> Report:
    node = load_node(against) if against else None  # a bad report fails before the image is read
    facts = read_image_facts(ref, timeout)
    return diagnose.image_report(facts, node, requires=requires, target=target, skip=skip)
