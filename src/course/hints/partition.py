"""Partition claims: "subject S shards (or keeps whole) object O", checked against the lesson's facts."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from course.hints.discourse import Context, clause_agent, clause_subject, subject_before
from course.hints.reader import (
    CAUSAL,
    CONTRAST,
    STANDARD_BEFORE,
    Clause,
    Cue,
    between,
    is_elliptic,
    negated_after,
    of,
    own_negation,
)
from course.hints.vocabulary import Vocabulary

PREDICATE_KINDS = ("partition", "whole", "fraction", "limit", "capacity")
ELIDED_OBJECT_WORDS = (
    r"它们|它|这些|那些|其|也|还|都|全部|全|就|被|把|将|会|能|可以|无法|同样|一起|是|的|了|则|当然|肯定|确实|"
    r"的确|真的|完全|根本|"
    r"(?<![A-Za-z])(?:it|they|them|those|these|can|cannot|can't|will|also|too|be|is|are|does|do|all"
    r"|certainly|indeed|of course|really)"
    r"(?![A-Za-z])"
)
FRESH_BEFORE = r"(?:新|(?<![A-Za-z])(?:new|updated|fresh))\s*(?:的)?\s*$"


@dataclass(frozen=True)
class ShardClaim:
    """'subjects partition (or keep whole) these objects', as asserted by one predicate."""

    subjects: frozenset[str] | None
    objects: frozenset[str]
    sharded: bool
    exclusive: bool
    agent: str
    groups: tuple[frozenset[str], ...] = ()  # objects named by a group word ('模型状态'): some of them, not each
    partitioned: bool = True  # said to be split, not only 'not replicated' (which different data are too)


def predicates_of(clause: Clause) -> list[Cue]:
    """Partition/whole/fraction predicates that state how things are stored.

    A whole copy that is gathered for a moment (临时拼出 / all-gather 出完整参数) is not stored whole.
    """
    transient = bool(of(clause.cues, "transient"))
    storage = bool(of(clause.cues, "storage"))
    preds = []
    volume_ends = {c.end for c in of(clause.cues, "volume")}
    for cue in of(clause.cues, "partition", "whole", "fraction"):
        if cue.kind == "fraction" and cue.start in volume_ends:  # '16Ψ/N_d' is a term of a formula
            continue
        if between(clause.cues, "from", 0, cue.start) and between(clause.cues, "to", cue.end, len(clause.text)):
            continue  # '由每卡完整变为每卡 1/N_d': the state before the change
        if cue.kind == "whole" and (transient or (between(clause.cues, "op", 0, cue.start) and not storage)):
            continue
        if between(clause.cues, "usage", 0, cue.start) and not storage:
            continue  # '只需要 1/N 的梯度' / '拿到完整的梯度': what a rank receives or uses, not what it stores
        preds.append(cue)
    return preds


def objects_of(cues: Iterable[Cue]) -> frozenset[str]:
    """Object ids named by the cues (a group word stands for all its members)."""
    return frozenset().union(*(c.value for c in of(cues, "object")))


def _assign_objects(clause: Clause, preds: list[Cue], objects: list[Cue]) -> dict[Cue, list[Cue]]:
    """Give each object to the nearest predicate (by character distance); a standard of comparison
    ('the way the weights do' / '像参数一样') is nobody's object."""
    owned: dict[Cue, list[Cue]] = {p: [] for p in preds}
    for obj in objects:
        if re.search(STANDARD_BEFORE, clause.text[: obj.start], re.I) or between(
            clause.cues, "exclusion", obj.start - 12, obj.start
        ):
            continue  # '1/N_d of everything except activations': excluded
        if re.search(FRESH_BEFORE, clause.text[: obj.start], re.I):
            continue  # '1/N 新参数' / 'the updated parameters': a step's fresh output, not the stored state
        nearest = min(preds, key=lambda p: max(p.start - obj.end, obj.start - p.end, 0))
        owned[nearest].append(obj)
    return owned


def _names_unknown(clause: Clause, pred: Cue) -> bool:
    """Words before a predicate that the vocabulary does not know ('G 和 P 不切'): its object is not elided."""
    chars = [ch for i, ch in enumerate(clause.text[: pred.start]) if not any(c.start <= i < c.end for c in clause.cues)]
    rest = re.sub(rf"{CONTRAST}|{CAUSAL}|{ELIDED_OBJECT_WORDS}", "", "".join(chars), flags=re.I)
    return bool(re.search(r"[A-Za-z\u4e00-\u9fff]", rest))


def _exclusive(clause: Clause, pred: Cue, prev_end: int) -> bool:
    """'只分片 X' with no 还/也/再, X named in the clause: the predicate claims X is all this subject partitions."""
    if pred.kind != "partition" or of(clause.cues, "incremental", "incremental_lead") or not of(clause.cues, "object"):
        return False
    only = between(clause.cues, "only", prev_end, pred.start) + between(clause.cues, "only", pred.end, pred.end + 4)
    return bool(only) and not between(clause.cues, "storage", prev_end, pred.start)


def shard_claims(clause: Clause, ctx: Context) -> list[ShardClaim]:
    """The partition claims a clause makes, inheriting an elided predicate or object if needed."""
    agent = clause_agent(clause, ctx)
    preds = predicates_of(clause)
    if not preds:
        names = bool(of(clause.cues, "object"))  # a list item or a bare answer names its objects
        listed = ctx.listing == clause.index and names
        if ctx.frame.shard_base is None or not (
            is_elliptic(clause, PREDICATE_KINDS) or ctx.wh_answer and names or listed
        ):
            return []
        objects = objects_of(clause.cues) or ctx.frame.objects
        base = ctx.listing_sharded if listed else ctx.frame.shard_base
        sharded = base != own_negation(clause)
        return [ShardClaim(clause_subject(clause) or ctx.topic, objects, sharded, False, agent)] if objects else []
    claims, prev_end = [], 0
    for pred, objs in _assign_objects(clause, preds, of(clause.cues, "object")).items():
        # 'ZeRO 无法分片它': the object is elided, unless what is spread is memory ('平摊下来每卡的总显存')
        inherits = (
            len(preds) == 1
            and pred.kind == "partition"
            and not of(clause.cues, "memory", "total", "static")
            and not _names_unknown(clause, pred)
        )
        announced = ctx.announced[1] if ctx.announced[0] == clause.index else frozenset()  # '差别在梯度：…'
        objects = objects_of(objs) or (ctx.frame.objects if inherits else announced)
        sharded = (pred.kind != "whole") != negated_after(clause, prev_end, pred)
        subjects = subject_before(clause, pred.start, ctx)
        if pred.kind == "whole" and not clause_subject(clause) and of(clause.cues, "same") and ctx.vocab.baseline:
            subjects = frozenset({ctx.vocab.baseline})  # '每卡一份相同的拷贝': the redundancy of the baseline
        groups = tuple(c.value for c in objs if c.value in ctx.vocab.collective)
        claims.append(
            ShardClaim(
                subjects, objects, sharded, _exclusive(clause, pred, prev_end), agent, groups, pred.kind != "whole"
            )
        )
        prev_end = pred.end
    return [c for c in claims if c.objects]


def check_shard(claim: ShardClaim, vocab: Vocabulary) -> list[tuple[str, str]]:
    """Compare a partition claim with what each subject really partitions."""
    found = []
    names = vocab.object_names
    forbidden = claim.objects & vocab.never_partitioned
    if forbidden and claim.sharded and claim.partitioned and claim.agent == "own":
        what = "、".join(names[o] for o in sorted(forbidden))
        found.append(("forbidden-partition", f"此句说{what}被分片；" + vocab.reasons.get("forbidden-partition", "")))
    for subject in sorted(claim.subjects or ()):
        truth = vocab.subjects[subject].partitions
        name = vocab.subjects[subject].name
        grouped = frozenset().union(*claim.groups)
        for group in claim.groups:  # 'ZeRO-1/2 只切模型状态': some of the group, the way the stage does
            if claim.sharded and not group & truth or not claim.sharded and group <= truth:
                found.append(("partition", f"{name} 分片的对象与此句所说不符"))
        for obj in sorted((claim.objects - grouped) & vocab.partitionable):
            if (obj in truth) != claim.sharded:
                verb = "不分片" if claim.sharded else "分片"
                found.append(("partition", f"{name} {verb}{names[obj]}，此句说法相反"))
        missing = truth - claim.objects
        if claim.exclusive and claim.sharded and missing and not claim.groups:
            found.append(
                ("partition", f"此句说 {name} 只分片这些对象，但它还分片{'、'.join(names[o] for o in sorted(missing))}")
            )
    return found
