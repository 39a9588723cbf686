"""Hints for graders: sentences of a short answer that look like one of a lesson's 一票否决项.

A hint never decides anything; it points a human grader at a sentence worth a second look.
The reader (course.grading.veto_reader) cuts the answer into clauses and cues; this module reads
claims off the cues and checks them against the facts of the lesson's vocabulary
(course.grading.veto_vocabulary, from lessons/lessonNN/veto_hints.yml):

- partition claims: "subject S shards (or keeps whole) object O", with polarity, ellipsis
  (激活也一样 / 其实不会 / 而是激活) and the topic subject carried between clauses;
- quantity claims: "entity E moves vΨ per step", "A's volume is r×B's", and the composition of a
  subject's step (which operations, in which phase);
- limit claims: "memory tends to zero" about the total, not just the partitioned state.

Claims inside quotes, in the scope of a reported misconception or in an if-clause are not the
student's own assertions and give no hint; an interrogative sentence asserts nothing, but a bare
answer right after a yes/no question (能否…？不能。) does. A lesson without a vocabulary gets no hints.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable

from course.grading.veto_reader import (
    CAUSAL,
    COMPARATIVE_AFTER,
    COMPARATIVE_BEFORE,
    CONTRAST,
    GROUP_JOINER,
    IDENTITY,
    ORDINAL,
    PLUS,
    RATIO_TARGET_BEFORE,
    STANDARD_BEFORE,
    WH_QUESTION,
    Clause,
    Cue,
    between,
    clauses_of,
    is_elliptic,
    negated_after,
    negations,
    normalise,
    of,
    own_negation,
    scan,
)
from course.grading.veto_vocabulary import Vocabulary

PREDICATE_KINDS = ("partition", "whole", "fraction", "limit", "capacity")
ELIDED_OBJECT_WORDS = (r"它们|它|这些|那些|其|也|还|都|全部|全|就|被|把|将|会|能|可以|无法|同样|一起|是|的|了|则|当然|肯定|确实|"
                       r"的确|真的|完全|根本|"
                       r"(?<![A-Za-z])(?:it|they|them|those|these|can|cannot|can't|will|also|too|be|is|are|does|do|all"
                       r"|certainly|indeed|of course|really)"
                       r"(?![A-Za-z])")
MEMORY_TALK = frozenset({"memory", "static", "total", "object", "fraction", "partition", "whole"})
Party = frozenset | str  # a group of subjects, or an operation
FRESH_BEFORE = r"(?:新|(?<![A-Za-z])(?:new|updated|fresh))\s*(?:的)?\s*$"
PER_RANK = r"每(?:张)?卡|每个\s*rank|(?<![A-Za-z])(?:per|each)[\s-](?:GPU|rank|device)(?![A-Za-z])"  # says whose
PRONOUN = r"它|(?<![A-Za-z])(?:it|this|that)(?![A-Za-z])"  # '因为它只是 AR 的一半': the party just named


@dataclass(frozen=True)
class VetoHint:
    """One sentence that looks like a veto item, with why, for a human grader to judge."""

    veto_id: str
    question: str | None
    sentence: str
    reason: str


@dataclass(frozen=True)
class Frame:
    """What a later elliptic clause can inherit: the last predicate and its objects."""

    objects: frozenset[str] = frozenset()
    shard_base: bool | None = None  # True: partition verb, False: keep-whole, None: none seen
    limit: bool = False


@dataclass
class Context:
    """Discourse state carried from clause to clause while reading one answer."""

    vocab: Vocabulary
    question: str | None
    topic: frozenset[str] | None = None
    agent: str = "own"
    frame: Frame = field(default_factory=Frame)
    last_ops: tuple[str, ...] = ()
    prev_ops: tuple[str, ...] = ()  # the operations of the clause just read
    answer_kinds: frozenset[str] = frozenset()  # cue kinds anywhere in the answer
    prev_entity: tuple | None = None  # the last subject/operation/phase of the clause just read
    introduced: bool = False  # the clause just read ends with a colon ('- reduce-scatter：…')
    ranks: frozenset[int] = frozenset()  # rank counts the answer states ('N_d = 8')
    wh_answer: bool = False  # this sentence answers a wh-question ('分片了什么？答：梯度')
    listing: int | None = None  # sentence whose items follow an introducing predicate ('分片：Z1 opt，Z2 …')
    listing_sharded: bool = True  # whether that predicate says its items are partitioned
    announced: tuple[int, frozenset[str]] = (-1, frozenset())  # sentence and objects a colon announced
    last_party: Party | None = None
    condition: tuple[int, str | None] = (-1, None)  # sentence and the condition it set ('开启梯度累积时，…')


# ---------------------------------------------------------------------------------------------
# Who and what a clause is about
# ---------------------------------------------------------------------------------------------


def _subject_groups(clause: Clause) -> list[tuple[frozenset[str], int, int, bool]]:
    """Coordinated subject mentions ('ZeRO-1 和 ZeRO-2') as (subjects, start, end, comparative)."""
    groups: list[list] = []
    for cue in of(clause.cues, "subject"):
        if groups and re.match(GROUP_JOINER, clause.text[groups[-1][2]:cue.start], re.I):
            groups[-1][0] = groups[-1][0] | cue.value
            groups[-1][2] = cue.end
        else:
            groups.append([cue.value, cue.start, cue.end])
    onwards = r"\s*(?:on(?![A-Za-z])|onwards|upwards|起|开始)"  # 'from stage 2 on' includes stage 2
    out = []
    for i, (s, a, b) in enumerate(groups):
        after = re.match(COMPARATIVE_AFTER, clause.text[b:])  # '与 B 相比', but in 'A 相比 B' A is the subject
        followed = after and i + 1 < len(groups) and groups[i + 1][1] - (b + after.end()) < 4
        comparative = (re.search(COMPARATIVE_BEFORE, clause.text[:a], re.I) and not re.match(onwards, clause.text[b:])
                       or after and not followed)
        out.append((s, a, b, bool(comparative)))
    return [g for g in out if g[0]]


def _subject(clause: Clause) -> frozenset[str] | None:
    """The first non-comparative subject group of a clause: what the clause is about."""
    return next((s for s, _, _, comp in _subject_groups(clause) if not comp), None)


def _subject_before(clause: Clause, pos: int, ctx: Context) -> frozenset[str] | None:
    """The nearest non-comparative subject group before a position, else one after it in the clause
    (passive: 'parameters are sharded in ZeRO-3'), else the topic."""
    own = [(a, s) for s, a, _, comp in _subject_groups(clause) if not comp]
    before = [s for a, s in own if a < pos]
    return before[-1] if before else own[0][1] if own else ctx.topic


def _agent(clause: Clause, ctx: Context) -> str:
    """Who the clause says does the partitioning: the lesson's technique (default) or another one."""
    if of(clause.cues, "other_agent"):
        return "other"
    if of(clause.cues, "subject", "own_agent"):
        return "own"
    return ctx.agent


def _names(vocab: Vocabulary, subjects: Iterable[str]) -> str:
    """'ZeRO-1/ZeRO-2' in the vocabulary's order."""
    order = list(vocab.subjects)
    return "/".join(vocab.subjects[s].name for s in sorted(subjects, key=order.index))


# ---------------------------------------------------------------------------------------------
# Claims: partitioning
# ---------------------------------------------------------------------------------------------


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


def _predicates(clause: Clause) -> list[Cue]:
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


def _objects_of(cues: Iterable[Cue]) -> frozenset[str]:
    """Object ids named by the cues (a group word stands for all its members)."""
    return frozenset().union(*(c.value for c in of(cues, "object")))


def _assign_objects(clause: Clause, preds: list[Cue], objects: list[Cue]) -> dict[Cue, list[Cue]]:
    """Give each object to the nearest predicate (by character distance); a standard of comparison
    ('the way the weights do' / '像参数一样') is nobody's object."""
    owned: dict[Cue, list[Cue]] = {p: [] for p in preds}
    for obj in objects:
        if re.search(STANDARD_BEFORE, clause.text[:obj.start], re.I) or between(clause.cues, "exclusion", obj.start - 12,
                                                                                 obj.start):
            continue  # '1/N_d of everything except activations': excluded
        if re.search(FRESH_BEFORE, clause.text[:obj.start], re.I):
            continue  # '1/N 新参数' / 'the updated parameters': a step's fresh output, not the stored state
        nearest = min(preds, key=lambda p: max(p.start - obj.end, obj.start - p.end, 0))
        owned[nearest].append(obj)
    return owned


def _names_unknown(clause: Clause, pred: Cue) -> bool:
    """Words before a predicate that the vocabulary does not know ('G 和 P 不切'): its object is not elided."""
    chars = [ch for i, ch in enumerate(clause.text[:pred.start]) if not any(c.start <= i < c.end for c in clause.cues)]
    rest = re.sub(rf"{CONTRAST}|{CAUSAL}|{ELIDED_OBJECT_WORDS}", "", "".join(chars), flags=re.I)
    return bool(re.search(r"[A-Za-z\u4e00-\u9fff]", rest))


def _exclusive(clause: Clause, pred: Cue, prev_end: int) -> bool:
    """'只分片 X' with no 还/也/再, X named in the clause: the predicate claims X is all this subject partitions."""
    if pred.kind != "partition" or of(clause.cues, "incremental", "incremental_lead") or not of(clause.cues, "object"):
        return False
    only = between(clause.cues, "only", prev_end, pred.start) + between(clause.cues, "only", pred.end, pred.end + 4)
    return bool(only) and not between(clause.cues, "storage", prev_end, pred.start)


def _shard_claims(clause: Clause, ctx: Context) -> list[ShardClaim]:
    """The partition claims a clause makes, inheriting an elided predicate or object if needed."""
    agent = _agent(clause, ctx)
    preds = _predicates(clause)
    if not preds:
        names = bool(of(clause.cues, "object"))  # a list item or a bare answer names its objects
        listed = ctx.listing == clause.index and names
        if ctx.frame.shard_base is None or not (is_elliptic(clause, PREDICATE_KINDS) or ctx.wh_answer and names
                                                or listed):
            return []
        objects = _objects_of(clause.cues) or ctx.frame.objects
        base = ctx.listing_sharded if listed else ctx.frame.shard_base
        sharded = base != own_negation(clause)
        return [ShardClaim(_subject(clause) or ctx.topic, objects, sharded, False, agent)] if objects else []
    claims, prev_end = [], 0
    for pred, objs in _assign_objects(clause, preds, of(clause.cues, "object")).items():
        # 'ZeRO 无法分片它': the object is elided, unless what is spread is memory ('平摊下来每卡的总显存')
        inherits = (len(preds) == 1 and pred.kind == "partition" and not of(clause.cues, "memory", "total", "static")
                    and not _names_unknown(clause, pred))
        announced = ctx.announced[1] if ctx.announced[0] == clause.index else frozenset()  # '差别在梯度：…'
        objects = _objects_of(objs) or (ctx.frame.objects if inherits else announced)
        sharded = (pred.kind != "whole") != negated_after(clause, prev_end, pred)
        subjects = _subject_before(clause, pred.start, ctx)
        if pred.kind == "whole" and not _subject(clause) and of(clause.cues, "same") and ctx.vocab.baseline:
            subjects = frozenset({ctx.vocab.baseline})  # '每卡一份相同的拷贝': the redundancy of the baseline
        groups = tuple(c.value for c in objs if c.value in ctx.vocab.collective)
        claims.append(ShardClaim(subjects, objects, sharded, _exclusive(clause, pred, prev_end), agent, groups,
                                 pred.kind != "whole"))
        prev_end = pred.end
    return [c for c in claims if c.objects]


def _check_shard(claim: ShardClaim, vocab: Vocabulary) -> list[tuple[str, str]]:
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
            found.append(("partition", f"此句说 {name} 只分片这些对象，但它还分片{'、'.join(names[o] for o in sorted(missing))}"))
    return found


# ---------------------------------------------------------------------------------------------
# Claims: per-step quantities
# ---------------------------------------------------------------------------------------------


def _is_quantity(clause: Clause, ctx: Context) -> bool:
    """The clause talks about the step's quantity (or inherits it from its sentence) and not only memory.

    A bare 'Z3：2Ψ' / '合计 2Ψ' is one too where nothing around it speaks of memory.
    """
    if of(clause.cues, "quantity", "op"):
        return True
    if of(clause.cues, "memory") or _predicates(clause):
        return False
    if any(c.kind in ("quantity", "op") for c in clause.sentence_cues):
        return True
    if not of(clause.cues, "volume", "repeat_volume") or any(c.kind in MEMORY_TALK for c in clause.sentence_cues):
        return False
    kinds = ctx.answer_kinds  # objects and verbs are memory talk only in an answer without collectives
    return not kinds & {"memory", "static", "total", "fraction"} and bool(kinds & {"op", "quantity"}
                                                                        or not kinds & MEMORY_TALK)


def _skippable_volume(clause: Clause, vol: Cue, ctx: Context) -> bool:
    """Memory fractions (2Ψ/N_d), exact forms ((N_d-1)/N_d Ψ), byte counts and baselines (从 2Ψ …) are not claims."""
    after, before = clause.text[vol.end:vol.end + 3], clause.text[max(0, vol.start - 6):vol.start]
    if re.match(r"\s*(?:个)?\s*(?:字节|bytes?(?![A-Za-z]))", clause.text[vol.end:], re.I):
        return True  # a byte count depends on the number format (4Ψ 字节 in BF16 is 2Ψ values)
    if re.search(r"/\s*$", clause.text[:vol.start]):
        return True  # the denominator of a ratio ('3Ψ / 2Ψ')
    divisor = ctx.vocab.divisor
    if divisor and (re.match(rf"\s*/\s*(?:{divisor})", after, re.I)
                    or re.search(rf"(?:{divisor}|\))\s*[·*×]?\s*$", before, re.I)):
        return True
    froms = [c for c in of(clause.cues, "from") if c.end <= vol.start]
    return bool(froms) and not between(clause.cues, "to", froms[-1].end, vol.start)


def _role(clause: Clause, vol: Cue) -> str:
    """increment (多出 Ψ) / component (Ψ + Ψ, … + RS Ψ) / total (共 2Ψ, = 3Ψ, A + B 是 2Ψ) / plain."""
    after = clause.text[vol.end:vol.end + 10]
    if re.search(ORDINAL, clause.text[:vol.start], re.I):
        return "component"
    more = between(clause.cues, "more", max(0, vol.start - 5), vol.start)
    if (more and not between(clause.cues, "to", more[-1].end, vol.start)) or re.match(r"\s*more\b", after, re.I):
        return "increment"
    since = max((c.end for c in of(clause.cues, "volume") if c.end <= vol.start), default=None)
    summed = re.search(PLUS, clause.text[since or 0:vol.start], re.I)
    if re.match(rf"\s*(?:\([^()]{{0,16}}\))?\s*(?:{PLUS})", clause.text[vol.end:], re.I) or (summed and since is not None):
        return "component"
    if between(clause.cues, "total_marker", max(since or 0, vol.start - 6), vol.start) or summed:
        return "total"  # 'reduce-scatter + all-gather 是 2Ψ' is the sum of what was added up
    return "total" if re.match(r"\s*(?:=|in total)", after, re.I) else "plain"


def _entities(clause: Clause) -> list[tuple[str, object, int, int]]:
    """Subject groups, operations and phases of a clause, in order: (kind, value, start, end)."""
    items = [("subject", s, a, b) for s, a, b, _ in _subject_groups(clause)]
    items += [(c.kind, c.value, c.start, c.end) for c in of(clause.cues, "op", "phase")]
    return sorted(items, key=lambda e: e[2])


def _op_count(clause: Clause, op_start: int) -> float:
    """How many times an operation is said to run: a count right before it (两次 all-gather, 2·V_AG),
    right after it (AG×2), or later with no other operation between (all-gathers … twice)."""
    ops = [c for c in of(clause.cues, "op") if c.start == op_start]
    op_end = ops[0].end if ops else op_start
    later_op = min((c.start for c in of(clause.cues, "op") if c.start > op_start), default=len(clause.text))
    counts = of(clause.cues, "count")
    postfix = [c for c in counts if clause.text[c.start:c.end].lstrip()[:1] in "×x*" and 0 <= c.start - op_end <= 1]
    prefix = [c for c in counts if clause.text[c.start:c.end].lstrip()[:1] not in "×x*" and 0 <= op_start - c.end <= 4]
    if postfix or prefix:
        return (postfix or prefix)[0].value
    after = [c for c in of(clause.cues, "count") if op_end < c.start < min(later_op, op_start + 40)]
    return after[0].value if after and re.match(r"[A-Za-z]", clause.text[after[0].start]) else 1.0


def _distributed_ops(ctx: Context) -> tuple[str, ...]:
    """The operations '各/each' refers to: the last ones named, parts rather than their sum."""
    ops = ctx.last_ops
    return tuple(o for o in ops if not set(ctx.vocab.op_parts.get(o, ())) & set(ops))


def _accepted_for(clause: Clause, vol: Cue, ctx: Context) -> tuple[str, set[float]] | None:
    """What the quantity is about and which values the lesson allows for it (None: unsure)."""
    role = _role(clause, vol)
    if role != "total":
        return _item_binding(clause, vol, ctx, role)
    total = _total_binding(clause, vol, ctx)
    unnamed = _bound_entity(clause, vol) is None and not _subject(clause)
    if unnamed and of(clause.cues, "distributive", "distributive_weak"):
        return _item_binding(clause, vol, ctx, role)  # '每项 ≈ Ψ' / '≈Ψ each': a share, not a total
    if not (unnamed and (_is_bare(clause, vol) or ctx.introduced)):
        return total
    if len(ctx.prev_ops) > 1 and not ctx.introduced:  # 'AG + RS，共 2Ψ' sums what was listed: the topic's total
        return total
    item = _item_binding(clause, vol, ctx, role)  # '，每卡 ≈ Ψ' may be the item's or the total
    if item is None or total is None:
        return item or total
    return f"{total[0]}/{item[0]}", total[1] | item[1]


def _item_binding(clause: Clause, vol: Cue, ctx: Context, role: str) -> tuple[str, set[float]] | None:
    """What a quantity that is not a total is about: its entity, the items just listed, or the topic."""
    vocab = ctx.vocab
    entity = _bound_entity(clause, vol)
    weak = len(ctx.prev_ops) > 1 and between(clause.cues, "distributive_weak", 0, vol.start)
    each = between(clause.cues, "distributive", 0, vol.end + 6)  # 'Ψ each' / '各 Ψ'
    if entity is None and each and not ctx.last_ops:
        return None  # a share of items not named yet ('Three pieces, Ψ each: …')
    if entity is None and (weak or each and ctx.last_ops):
        ops = _distributed_ops(ctx)
        values = {vocab.op_volume[o] for o in ops}
        return ("、".join(ops), values) if len(values) == 1 else None
    if entity is None and _is_bare(clause, vol) and len(ctx.prev_ops) > 1:  # 'RS + AG，2Ψ': the sum or a part
        listed = {vocab.op_volume[o] for o in ctx.prev_ops}
        return "所列集合通信", listed | {sum(vocab.op_volume[o] for o in ctx.prev_ops)}
    if entity is None and (_is_bare(clause, vol) or ctx.introduced) and ctx.prev_entity:
        entity = ctx.prev_entity  # 'all-gather 参数，Ψ': apposition; '- RS：每卡 Ψ': what the colon announced
    if entity is None:
        return None if role == "component" else _subject_values(ctx.topic or _question_subjects(ctx), vocab)
    kind, value, start, _ = entity
    if kind == "op":
        return value, {vocab.op_volume[value], vocab.op_volume[value] * _op_count(clause, start)}
    if kind == "phase":
        subjects = _subject_before(clause, start, ctx) or frozenset()
        allowed = [vocab.phase_volumes(s, value) for s in subjects]
        return (f"{value} 阶段", allowed[0]) if len(allowed) == 1 and allowed[0] else None
    return _subject_values(value, vocab) if role == "plain" else None


def _identified_op(clause: Clause, vol: Cue) -> str | None:
    """The operation an extra quantity is said to be ('多出来的 Ψ 是 all-reduce / the extra Ψ is an all-gather')."""
    if not re.match(IDENTITY, clause.text[vol.end:], re.I):
        return None
    ops = [c for c in of(clause.cues, "op") if c.start >= vol.end]
    return ops[0].value if ops else None


def _is_bare(clause: Clause, vol: Cue) -> bool:
    """A clause that is only a quantity ('，Ψ' / '(Ψ)' / '，通信量约 Ψ'): it belongs to what the previous clause
    named; words that only say what the number is (通信量, 约, 是, 共) name nothing of their own."""
    rest = clause.text[:vol.start] + " " * (vol.end - vol.start) + clause.text[vol.end:]
    for cue in of(clause.cues, "quantity", "hedge", "total_marker"):
        rest = rest[:cue.start] + " " * (cue.end - cue.start) + rest[cue.end:]
    return not re.sub(rf"[\s()（）。；;,，的是为约量又也]|{PER_RANK}", "", rest, flags=re.I)


def _bound_entity(clause: Clause, vol: Cue) -> tuple[str, object, int, int] | None:
    """What the quantity is given to ('Ψ 的 all-gather', 'Ψ 给前向的 all-gather', '2Ψ for DDP'), else the
    nearest entity before it."""
    follow = re.match(r"\s*(?:的|of|for|in|给|用于|用在|goes to|is spent on|\()\s*(?:(?:the|an?)\s+)?",
                      clause.text[vol.end:], re.I)  # '(' labels a quantity: 'K (RS)'
    nxt = [e for e in _entities(clause) if e[0] in ("op", "subject") and e[2] >= vol.end]  # '2Ψ for DDP'
    label = re.match(r"\s*\(([^()]*)\)", clause.text[vol.end:])
    listed = label and re.search(rf"{PLUS}|、|,|，|\band\b|和", label.group(1))  # '3Ψ (AG + AG + RS)' lists parts
    if follow and nxt and nxt[0][2] - (vol.end + follow.end()) <= 8 and not listed:
        return nxt[0]
    before = [e for e in _entities(clause) if e[3] <= vol.start]
    return before[-1] if before else None


def _total_binding(clause: Clause, vol: Cue, ctx: Context) -> tuple[str, set[float]] | None:
    """A total (共/总计/=) is about the clause's subject; else it may sum the operations listed before it
    in the clause, or be the topic's total ('…; together with X and Y this gives 3Ψ')."""
    subject = _subject(clause)
    if subject:
        return _subject_values(subject, ctx.vocab)
    topic = _subject_values(ctx.topic or _question_subjects(ctx), ctx.vocab)
    ops = [c for c in of(clause.cues, "op") if c.end <= vol.start]
    if not ops:
        return topic
    listed = sum(ctx.vocab.op_volume[c.value] * _op_count(clause, c.start) for c in ops)
    return "所列集合通信之和", {listed} | (topic[1] if topic else set())


def _question_subjects(ctx: Context) -> frozenset[str] | None:
    """The subjects a question is about, used when an answer names none."""
    return ctx.vocab.questions.get(ctx.question or "")


def _subject_values(subjects: frozenset[str] | None, vocab: Vocabulary) -> tuple[str, set[float]] | None:
    """Per-step totals the lesson gives for a subject group (empty when they differ within the group)."""
    if not subjects:
        return None
    values = {vocab.step_volume(s) for s in subjects} - {None}
    if not values:
        return None
    return _names(vocab, subjects), values if len(values) == 1 else set()


def _volume_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """Quantities (kΨ) that do not match the entity they are bound to."""
    found, prev_end, memory_end = [], 0, -1
    for vol in of(clause.cues, "volume"):
        if _object_memory(clause, vol, prev_end, memory_end):
            prev_end = memory_end = vol.end
            continue
        if _skippable_volume(clause, vol, ctx):
            prev_end = vol.end
            continue
        negated_before = bool(negations(clause, prev_end, vol.start)) or clause.opener == "replace_neg"
        negated = negated_before != bool(between(clause.cues, "postneg", vol.end, len(clause.text) + 1))
        prev_end = vol.end
        if _role(clause, vol) == "increment":
            named = _identified_op(clause, vol)
            if named and (ctx.vocab.op_volume[named] == vol.value) == negated:
                found.append(("quantity", f"{named} 的{ctx.vocab.quantity_name}是 "
                                          f"{_fmt({ctx.vocab.op_volume[named]}, ctx.vocab)}，此句说多出的 "
                                          f"{_fmt({vol.value}, ctx.vocab)} 就是它"))
            elif not named:
                found += _relation_hints(clause, ctx, ("diff", vol.value), negated)
            continue
        bound = _accepted_for(clause, vol, ctx)
        if bound is None:
            continue
        what, allowed = bound
        if (vol.value in allowed or _exact_form(vol.value, allowed, ctx)) == negated:
            said = "说不是" if negated else "给出"
            found.append(("quantity", f"{what} 的{ctx.vocab.quantity_name}应为 {_fmt(allowed, ctx.vocab)}，"
                                      f"此句{said} {_fmt({vol.value}, ctx.vocab)}"))
    return found


def _repeat_volume_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'3mΨ': the quantity per repetition of a condition, checked against what the subject's step repeats under it."""
    found = []
    for vol in of(clause.cues, "repeat_volume"):
        condition, per = vol.value
        vocab = ctx.vocab.under(condition)
        subjects = _subject_before(clause, vol.start, ctx) or _question_subjects(ctx) or frozenset()
        values = {vocab.repeated_volume(s) for s in subjects}
        negated = bool(negations(clause, 0, vol.start)) != bool(between(clause.cues, "postneg", vol.end,
                                                                         len(clause.text) + 1))
        if len(values) == 1 and (per in values) == negated:
            m = vocab.conditions[condition].repeat_name
            found.append(("quantity", f"{vocab.conditions[condition].name}时 {_names(vocab, subjects)} 的"
                                      f"{vocab.quantity_name}随 {m} 增长的部分为 {_fmt(values, vocab)}×{m}，"
                                      f"此句{'说不是' if negated else '给出'} {_fmt({per}, vocab)}×{m}"))
    return found


def _object_memory(clause: Clause, vol: Cue, prev_end: int, memory_end: int) -> bool:
    """'梯度 2Ψ → 2Ψ/N' / '优化器状态 12Ψ': an object's memory, not a collective's volume ('AG 参数 Ψ' is one)."""
    if memory_end >= 0 and re.fullmatch(r"\s*(?:→|->|降到|降至|变成|变为|to)\s*", clause.text[memory_end:vol.start], re.I):
        return True
    before = [c for c in clause.cues if prev_end <= c.start and c.end <= vol.start and c.kind in ("object", "op")]
    return bool(before) and before[-1].kind == "object" and not of(before, "op") and vol.start - before[-1].end <= 3


def _exact_form(value: float, allowed: set[float], ctx: Context) -> bool:
    """'N_d = 8 时 AR = 1.75Ψ': the exact ring volume (N−1)/N of an allowed one, for an N the answer states."""
    return any(abs(value - a * (n - 1) / n) < 1e-9 for a in allowed for n in ctx.ranks)


def _fmt(values: set[float], vocab: Vocabulary) -> str:
    """'2Ψ' / '1Ψ 或 2Ψ' for a reason string, in the lesson's unit."""
    return " 或 ".join(f"{v:g}{vocab.unit_name}" for v in sorted(values)) or "（各档不同）"


def _relation(clause: Clause) -> tuple[str, float] | None:
    """The comparison a clause states: ratio r, same, more, less."""
    ratio, percent = of(clause.cues, "ratio"), of(clause.cues, "percent")
    more = [c for c in of(clause.cues, "more") if not _counts_operations(clause, c)]
    less = of(clause.cues, "less")
    if ratio:
        return ("ratio_more" if more else "ratio", ratio[0].value)
    if percent and (more or less):
        return ("ratio", 1 + percent[0].value if more else 1 - percent[0].value)
    if of(clause.cues, "same"):
        return ("ratio", 1.0)
    if more:
        return ("more", 0.0)
    if less:
        return ("less", 0.0)
    if (of(clause.cues, "total_marker") and len(_subject_groups(clause)) == 2 and not of(clause.cues, "volume")
            and not re.search(rf"{PLUS}|/", clause.text)):
        return ("ratio", 1.0)  # 'Z3 通信 = DDP', not 'V(Z3) / V(DDP) = 1.5'
    return None


def _counts_operations(clause: Clause, cue: Cue) -> bool:
    """'多一次 all-gather / one more all-gather' counts operations; it says nothing about volume."""
    ops = [c for c in of(clause.cues, "op") if c.start >= cue.end]
    return bool(ops) and bool(re.match(r"^\s*(?:了|出)?\s*(?:一次|一个|1\s*次|an?|one)?\s*\S{0,4}\s*$",
                                       clause.text[cue.end:ops[0].start], re.I))


def _possessed(clause: Clause, ents: list) -> list:
    """'ZeRO-1 的 reduce-scatter / ZeRO-3's all-gather': the operation, not the subject, is the party."""
    out = []
    for i, e in enumerate(ents):
        nxt = ents[i + 1] if i + 1 < len(ents) else None
        if (e[0] == "subject" and nxt and nxt[0] == "op"
                and re.fullmatch(r"\s*(?:的|'s|中的|里的)\s*", clause.text[e[3]:nxt[2]], re.I)):
            continue
        out.append(e)
    return out


def _parties(clause: Clause, ctx: Context) -> tuple[Party, Party] | None:
    """(A, B) of 'A 是 B 的 r 倍 / A 比 B 多'; B is the party after 比/是/与/than/of.

    Subjects are the parties; an operation is one only as the compared-with party, as the possessed
    thing ('ZeRO-1 的 reduce-scatter') or when no subject is named, not when it is the extra item.
    A clause that opens with its comparison ('，比 all-reduce 少一半') compares the previous clause's party.
    """
    ents = _possessed(clause, [e for e in _entities(clause) if e[0] in ("subject", "op")])
    target = [e for e in ents if re.search(RATIO_TARGET_BEFORE, clause.text[:e[2]], re.I)]
    if len(target) > 1 and target[0] is ents[0]:  # '快两倍是 RS 只有 AR 的一半': the first 是 frames the clause
        target = target[1:]
    others = [e for e in ents if e not in target]
    if any(e[0] == "subject" for e in ents):
        others = [e for e in others if e[0] == "subject"]
    if not target and (others and all(e[0] == "op" for e in others) or not others and not _bare_ratio(clause)):
        return None  # 'replacing A by B costs nothing extra', '3 × 7B': no comparison of two parties
    b = target[0][1] if target else (others[1][1] if len(others) > 1 else None)
    elided = re.match(r"\s*(?:比|相比|than|compared|(?:约|大约)?(?:是|为|等于)|(?:只|仅)(?:有|占|是|为)|相当于"
                      r"|(?:which\s+)?(?:is|equals))",
                      clause.text, re.I)  # '，比 AR 少一半' / '，是 AR 的一半' / '，只有 AR 的一半': the previous party
    pronoun = not others and re.search(PRONOUN, clause.text[:target[0][2] if target else len(clause.text)], re.I)
    like = ctx.last_party if (elided or pronoun) and isinstance(ctx.last_party, type(b)) else None  # like with like
    a = others[0][1] if others else (like or ctx.topic or _question_subjects(ctx))
    baseline = ctx.vocab.baseline
    if b is None and isinstance(a, frozenset) and baseline and a != frozenset({baseline}):
        b = frozenset({baseline})
    return (a, b) if a is not None and b is not None and a != b else None


def _bare_ratio(clause: Clause) -> bool:
    """A clause that is only a ratio ('，翻了一倍'): it compares the topic with the baseline."""
    ratio = of(clause.cues, "ratio")
    rest = clause.text[:ratio[0].start] + clause.text[ratio[0].end:] if ratio else clause.text
    return bool(ratio) and len(re.sub(r"[\s了约大概是的。，,.]", "", rest)) == 0


def _volume_of(party: Party, vocab: Vocabulary) -> set[float]:
    """True per-step quantities of a party (a subject group or an operation)."""
    if isinstance(party, str):
        return {vocab.op_volume[party]}
    return {vocab.step_volume(s) for s in party} - {None}


def _holds(kind: str, value: float, a: float, b: float) -> bool:
    """Whether 'a relates to b' as stated."""
    if kind == "ratio":
        return abs(a - value * b) < 1e-9
    if kind == "ratio_more":
        return abs(a - value * b) < 1e-9 or abs(a - (value + 1) * b) < 1e-9
    if kind == "diff":
        return abs((a - b) - value) < 1e-9
    return a > b if kind == "more" else a < b


def _party_name(party: Party, vocab: Vocabulary) -> str:
    """Readable name of a subject group or operation."""
    return party if isinstance(party, str) else _names(vocab, party)


def _relation_hints(clause: Clause, ctx: Context, relation: tuple[str, float] | None,
                    negated: bool) -> list[tuple[str, str]]:
    """Check a stated comparison between two parties' quantities."""
    parties = _parties(clause, ctx) if relation else None
    if parties is None:
        return []
    kind, value = relation
    a, b = parties
    for va in _volume_of(a, ctx.vocab):
        for vb in _volume_of(b, ctx.vocab):
            if _holds(kind, value, va, vb) == negated:
                return [("quantity", f"{_party_name(a, ctx.vocab)}（{_fmt({va}, ctx.vocab)}）与 "
                                     f"{_party_name(b, ctx.vocab)}（{_fmt({vb}, ctx.vocab)}）的"
                                     f"{ctx.vocab.quantity_name}关系与此句所说不符")]
    return []


def _comparison_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'ZeRO-3 的通信量是 DDP 的两倍' style claims (no explicit kΨ needed)."""
    if of(clause.cues, "speed") or not (_entities(clause) or _bare_ratio(clause) and ctx.topic):
        return []
    if any(_role(clause, v) == "increment" for v in of(clause.cues, "volume")):
        return []
    relation = _relation(clause)
    if relation is None:
        return []
    first = min(c.start for c in clause.cues if c.kind in ("ratio", "percent", "same", "more", "less", "total_marker"))
    negated = bool(negations(clause, 0, first)) != bool(of(clause.cues, "postneg"))
    return _relation_hints(clause, ctx, relation, negated)


def _phase_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """An operation said to run in a phase where the subject's step has none ('ZeRO-3 优化器步后 all-gather')."""
    found = []
    if own_negation(clause):
        return found
    ops = of(clause.cues, "op")
    for op in ops:
        phases = [p for p in of(clause.cues, "phase") if len(ops) == 1 or abs(p.start - op.start) < 24]
        subjects = _subject_before(clause, op.start, ctx) or _question_subjects(ctx)
        if not phases or not subjects or len(subjects) != 1:
            continue
        (subject,) = subjects
        phase = min(phases, key=lambda p: abs(p.start - op.start)).value
        step = ctx.vocab.subjects[subject].step
        if step and not any(s.op == op.value and phase in s.phases for s in step):
            found.append(("quantity", f"{ctx.vocab.subjects[subject].name} 在 {phase} 阶段没有 {op.value}"))
    return found


def _in_parts(ops: Counter[str], vocab: Vocabulary) -> Counter[str]:
    """Operations with every sum written as its parts (an all-reduce is a reduce-scatter and an all-gather)."""
    out: Counter[str] = Counter()
    for op, n in ops.items():
        for part in vocab.op_parts.get(op) or (op,):
            out[part] += n
    return out


def _listed_ops(clauses: list[Clause], vocab: Vocabulary) -> Counter[str]:
    """The operations some clauses list, counted ('两次 AG'), sums written as their parts."""
    listed: Counter[str] = Counter()
    for c in clauses:
        for op in of(c.cues, "op"):
            if not re.search(r"(?:那次|这次|那个|这个|该|(?<![A-Za-z])(?:that|this))\s*$", c.text[:op.start], re.I):
                listed[op.value] += int(_op_count(c, op.start))  # '多出来那次 AG' refers back, it adds none
    for whole, parts in vocab.op_parts.items():  # 'all-reduce = RS + AG' is a derivation, not three collectives
        if parts and whole in listed and all(p in listed for p in parts):
            del listed[whole]
    return _in_parts(listed, vocab)


def _composition_hints(clauses: list[Clause], ctx: Context) -> list[tuple[str, str, str]]:
    """A sentence that lists a subject's whole step (its operations add up to the step's total) but wrongly.

    '3Ψ = 三次 all-gather' adds up to ZeRO-3's 3Ψ, yet its step is two all-gathers and a reduce-scatter.
    """
    vocab = ctx.vocab
    fallback = ctx.topic or _question_subjects(ctx)
    subjects = {s for c in clauses for s, _, _, comp in _subject_groups(c) if not comp} or (
        {fallback} if fallback else set())
    asserted = [c for c in clauses if not (c.reported or c.hypothetical or c.aside or own_negation(c))]
    if len(subjects) != 1 or len(next(iter(subjects))) != 1 or not asserted:
        return []
    (subject,) = next(iter(subjects))
    step = _in_parts(Counter(s.op for s in vocab.subjects[subject].step), vocab)
    listed = _listed_ops(asserted, vocab)
    if any(_listed_ops([c], vocab) == step for c in asserted):
        return []  # one clause lists the step right; the others name its operations again ('RS + AG：RS Ψ，AG Ψ')
    total = vocab.step_volume(subject)
    said = sum(vocab.op_volume[o] * n for o, n in listed.items())
    stated = {v.value for c in asserted for v in of(c.cues, "volume")}  # '3Ψ = AG + RS + AR' states the total
    summed = any(re.search(PLUS, c.text) for c in asserted)
    adds_up = abs(said - total) < 1e-9 if total is not None else False
    # only a written sum or a stated total makes the mentions a composition ('提前 AG，藏住两次 AG' is none)
    if (sum(listed.values()) < 2 or total is None or listed == step or not (summed or stated)
            or not (adds_up or summed and total in stated)):
        return []
    parts = " + ".join(f"{n}×{o}" for o, n in sorted(step.items()))
    return [("quantity", asserted[0].sentence, f"{vocab.subjects[subject].name} 的 {_fmt({total}, vocab)} 由 "
                                               f"{parts} 组成，此句列出的不同")]


# ---------------------------------------------------------------------------------------------
# Claims: unbounded limits
# ---------------------------------------------------------------------------------------------


def _limit_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'显存随 N_d 降到任意低/0' about total memory (not just the partitioned state)."""
    limit, capacity = of(clause.cues, "limit"), of(clause.cues, "capacity")
    arrows = [c for c in of(clause.cues, "to") if clause.text[c.start:c.end] in ("→", "->")]
    limit = limit or [z for z in of(clause.cues, "zero_number")  # '→ 每卡显存 0', '可以到 0'
                      if arrows and arrows[0].end <= z.start or between(clause.cues, "to", z.start - 3, z.start)]
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
    objects = _objects_of(clause.cues) if own_topic else ctx.frame.objects  # '…model-state memory ∝ 1/N_d，→ 0'
    total = bool(of(clause.cues, "total")) or (bool(objects & ctx.vocab.never_partitioned)
                                               and not of(clause.cues, "exclusion"))
    static = bool(of(clause.cues, "static")) or bool(objects) and objects <= ctx.vocab.partitionable
    if static and not total and not capacity:
        return []
    return [("limit", "此句说显存可随规模降到任意低/0；" + ctx.vocab.reasons.get("limit", ""))]


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def _frame_after(clause: Clause, ctx: Context) -> Frame:
    """The predicate frame an elliptic follower of this clause would borrow: the latest predicate."""
    preds = _predicates(clause)
    objects = _objects_of(clause.cues) or ctx.frame.objects
    limit = bool(of(clause.cues, "limit", "capacity"))
    if preds or limit:
        return Frame(objects, preds[-1].kind != "whole" if preds else None, limit)
    return replace(ctx.frame, objects=objects)


def _read_clause(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """All findings (claim kind, reason) of one asserted clause."""
    found: list[tuple[str, str]] = []
    if not clause.hypothetical:
        for claim in _shard_claims(clause, ctx):
            found += _check_shard(claim, ctx.vocab)
        if _is_quantity(clause, ctx):
            found += (_volume_hints(clause, ctx) + _repeat_volume_hints(clause, ctx) + _comparison_hints(clause, ctx)
                      + _phase_hints(clause, ctx))
    return found + _limit_hints(clause, ctx)


def _set_condition(clause: Clause, ctx: Context) -> None:
    """A clause naming a condition sets it for the rest of its sentence; naming it negated ('不做梯度累积时')
    sets the plain step."""
    for cue in of(clause.cues, "condition"):
        negated = any(0 <= cue.start - n.end <= 3 for n in of(clause.cues, "neg"))
        ctx.condition = (clause.index, None if negated else cue.value)


def _under_condition(ctx: Context, index: int) -> Context:
    """The context whose facts are those of the condition sentence `index` set (the plain ones elsewhere)."""
    at, condition = ctx.condition
    return replace(ctx, vocab=ctx.vocab.under(condition)) if at == index and condition else ctx


def _advance(clause: Clause, ctx: Context) -> None:
    """Update the topic subject, agent, predicate frame and last party after reading a clause."""
    subject = _subject(clause)
    if subject and not clause.aside and clause.opener != "replace_neg":  # 'It is ZeRO-3, not ZeRO-2, that …'
        ctx.topic = subject
    if of(clause.cues, "other_agent") or of(clause.cues, "subject", "own_agent"):
        ctx.agent = _agent(clause, ctx)
    if clause.introduces and _objects_of(clause.cues):
        ctx.announced = (clause.index, _objects_of(clause.cues))
    if clause.introduces and _predicates(clause):  # '分片：' / '不常驻完整参数：' announces items with its polarity
        ctx.listing = clause.index
        preds = _predicates(clause)
        since = preds[-2].end if len(preds) > 1 else 0
        ctx.listing_sharded = (preds[-1].kind != "whole") != negated_after(clause, since, preds[-1])
    elif ctx.listing != clause.index:
        ctx.listing = None
    if ctx.listing != clause.index or clause.introduces:  # a list item keeps the announced predicate
        ctx.frame = _frame_after(clause, ctx)
    if clause.aside:  # a parenthetical remark leaves what the clause before it listed and named
        return
    ops = tuple(c.value for c in of(clause.cues, "op"))
    ctx.last_ops, ctx.prev_ops = ops or ctx.last_ops, ops
    ctx.prev_entity = (_entities(clause) or [None])[-1]
    ctx.introduced = clause.introduces
    ents = _possessed(clause, [e for e in _entities(clause) if e[0] in ("subject", "op")])
    if ents:
        ctx.last_party = ents[0][1]


def find_veto_hints(text: str, vocab: Vocabulary | None, question: str | None = None) -> list[VetoHint]:
    """Sentences of a student's answer that look like a veto item (hints for a grader, not verdicts)."""
    if vocab is None:
        return []
    plain = normalise(text)[0]
    ranks = frozenset(int(n) for n in re.findall(rf"(?:{vocab.divisor})\s*=\s*(\d+)(?![\d.])", plain) if int(n) > 1) \
        if vocab.divisor else frozenset()
    ctx = Context(vocab, question, answer_kinds=frozenset(c.kind for c in scan(plain, vocab.lexicon)), ranks=ranks)
    hints: dict[tuple[str, str], VetoHint] = {}

    def add(kind: str, sentence: str, reason: str) -> None:
        veto_id = vocab.vetoes.get(kind)
        if veto_id:
            hints.setdefault((veto_id, sentence), VetoHint(veto_id, question, sentence, reason))

    sentence: list[Clause] = []
    asked, index = False, -1
    for clause, interrogative in clauses_of(text, vocab.lexicon):
        if clause.index != index:  # a new sentence: does it answer a wh-question just asked?
            ctx.wh_answer, index = asked and not interrogative, clause.index
            asked = interrogative and bool(re.search(WH_QUESTION, clause.sentence, re.I))
        if sentence and clause.index != sentence[0].index:
            for kind, where, reason in _composition_hints(sentence, _under_condition(ctx, sentence[0].index)):
                add(kind, where, reason)
            sentence = []
        if not interrogative:
            sentence.append(clause)
        _set_condition(clause, ctx)
        if not (interrogative or clause.reported):  # a question's predicate still frames a bare answer (能否…？不能)
            for kind, reason in _read_clause(clause, _under_condition(ctx, clause.index)):
                add(kind, clause.sentence, reason)
        _advance(clause, ctx)
    for kind, where, reason in _composition_hints(sentence, _under_condition(ctx, index)) if sentence else ():
        add(kind, where, reason)
    return list(hints.values())
