"""CD920: --for FRAMEWORK[==VERSION]: does this machine fit that framework build (judges per framework)."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from . import RuleContext, rule
from ..remedies.targets import target_syntax_fix
from .common import ERROR, compat_of, finding
from .policy import parse_target
from .target_dl4j import judge_dl4j
from .target_python import judge_jax, judge_tf, judge_torch


def _judge_target(facts: Facts, ctx: RuleContext, text: str) -> List[Finding]:
    compat = compat_of(ctx)
    target = parse_target(text, compat)
    judge = {"dl4j": judge_dl4j, "tensorflow": judge_tf, "torch": judge_torch, "jax": judge_jax}[target.framework]
    return judge(facts, compat, target)


@rule("CD920", "for-target", "The machine does not fit the --for framework build", section="policy")
def for_target(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not ctx.target:
        return []
    try:
        return _judge_target(facts, ctx, ctx.target)
    except ValueError as exc:
        return [finding(ERROR, "--for %r cannot be judged: %s" % (ctx.target, exc),
                        remedy=target_syntax_fix())]

