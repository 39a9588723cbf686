"""Limit claims: "memory tends to zero" said of the total, not just of the partitioned state."""

from __future__ import annotations

from course.hints.discourse import Context
from course.hints.partition import PREDICATE_KINDS, objects_of
from course.hints.reader import Clause, between, is_elliptic, negations, of, own_negation


def limit_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'显存随 N_d 降到任意低/0' about total memory (not just the partitioned state)."""
    limit, capacity = of(clause.cues, "limit"), of(clause.cues, "capacity")
    arrows = [c for c in of(clause.cues, "to") if clause.text[c.start : c.end] in ("→", "->")]
    limit = limit or [
        z
        for z in of(clause.cues, "zero_number")  # '→ 每卡显存 0', '可以到 0'
        if arrows and arrows[0].end <= z.start or between(clause.cues, "to", z.start - 3, z.start)
    ]
    own = limit or capacity
    if own:
        negated = bool(negations(clause, 0, own[0].start)) != bool(of(clause.cues, "postneg"))
    elif ctx.frame.limit and is_elliptic(clause, PREDICATE_KINDS):  # 静态显存趋于 0，激活也一样
        negated = own_negation(clause)
    else:
        return []
    if negated or limit and between(clause.cues, "only", limit[0].end, len(clause.text)):
        return []  # '趋近 0 的只是这一项': the limit is said of one part only
    if limit and not capacity and not any(c.kind in ("memory", "total", "static") for c in clause.sentence_cues):
        return []
    own_topic = of(clause.cues, "object", "memory", "total", "static")
    objects = objects_of(clause.cues) if own_topic else ctx.frame.objects  # '…model-state memory ∝ 1/N_d，→ 0'
    total = bool(of(clause.cues, "total")) or (
        bool(objects & ctx.vocab.never_partitioned) and not of(clause.cues, "exclusion")
    )
    static = bool(of(clause.cues, "static")) or bool(objects) and objects <= ctx.vocab.partitionable
    if static and not total and not capacity:
        return []
    return [("limit", "此句说显存可随规模降到任意低/0；" + ctx.vocab.reasons.get("limit", ""))]
