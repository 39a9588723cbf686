"""Quantity claims: what an entity moves per step, ratios between volumes, and the composition of a step."""

from __future__ import annotations

import re
from collections import Counter

from course.hints.discourse import Context, Party, clause_subject, subject_before, subject_groups, subject_names
from course.hints.partition import predicates_of
from course.hints.reader import (
    IDENTITY,
    ORDINAL,
    PLUS,
    RATIO_TARGET_BEFORE,
    Clause,
    Cue,
    between,
    negations,
    of,
    own_negation,
)
from course.hints.vocabulary import Vocabulary

MEMORY_TALK = frozenset({"memory", "static", "total", "object", "fraction", "partition", "whole"})
PER_RANK = r"每(?:张)?卡|每个\s*rank|(?<![A-Za-z])(?:per|each)[\s-](?:GPU|rank|device)(?![A-Za-z])"  # says whose
PRONOUN = r"它|(?<![A-Za-z])(?:it|this|that)(?![A-Za-z])"  # '因为它只是 AR 的一半': the party just named


def is_quantity(clause: Clause, ctx: Context) -> bool:
    """The clause talks about the step's quantity (or inherits it from its sentence) and not only memory.

    A bare 'Z3：2Ψ' / '合计 2Ψ' is one too where nothing around it speaks of memory.
    """
    if of(clause.cues, "quantity", "op"):
        return True
    if of(clause.cues, "memory") or predicates_of(clause):
        return False
    if any(c.kind in ("quantity", "op") for c in clause.sentence_cues):
        return True
    if not of(clause.cues, "volume", "repeat_volume") or any(c.kind in MEMORY_TALK for c in clause.sentence_cues):
        return False
    kinds = ctx.answer_kinds  # objects and verbs are memory talk only in an answer without collectives
    return not kinds & {"memory", "static", "total", "fraction"} and bool(
        kinds & {"op", "quantity"} or not kinds & MEMORY_TALK
    )


def _skippable_volume(clause: Clause, vol: Cue, ctx: Context) -> bool:
    """Memory fractions (2Ψ/N_d), exact forms ((N_d-1)/N_d Ψ), byte counts and baselines (从 2Ψ …) are not claims."""
    after, before = clause.text[vol.end : vol.end + 3], clause.text[max(0, vol.start - 6) : vol.start]
    if re.match(r"\s*(?:个)?\s*(?:字节|bytes?(?![A-Za-z]))", clause.text[vol.end :], re.I):
        return True  # a byte count depends on the number format (4Ψ 字节 in BF16 is 2Ψ values)
    if re.search(r"/\s*$", clause.text[: vol.start]):
        return True  # the denominator of a ratio ('3Ψ / 2Ψ')
    divisor = ctx.vocab.divisor
    if divisor and (
        re.match(rf"\s*/\s*(?:{divisor})", after, re.I) or re.search(rf"(?:{divisor}|\))\s*[·*×]?\s*$", before, re.I)
    ):
        return True
    froms = [c for c in of(clause.cues, "from") if c.end <= vol.start]
    return bool(froms) and not between(clause.cues, "to", froms[-1].end, vol.start)


def _role(clause: Clause, vol: Cue) -> str:
    """increment (多出 Ψ) / component (Ψ + Ψ, … + RS Ψ) / total (共 2Ψ, = 3Ψ, A + B 是 2Ψ) / plain."""
    after = clause.text[vol.end : vol.end + 10]
    if re.search(ORDINAL, clause.text[: vol.start], re.I):
        return "component"
    more = between(clause.cues, "more", max(0, vol.start - 5), vol.start)
    if (more and not between(clause.cues, "to", more[-1].end, vol.start)) or re.match(r"\s*more\b", after, re.I):
        return "increment"
    since = max((c.end for c in of(clause.cues, "volume") if c.end <= vol.start), default=None)
    summed = re.search(PLUS, clause.text[since or 0 : vol.start], re.I)
    if re.match(rf"\s*(?:\([^()]{{0,16}}\))?\s*(?:{PLUS})", clause.text[vol.end :], re.I) or (
        summed and since is not None
    ):
        return "component"
    if between(clause.cues, "total_marker", max(since or 0, vol.start - 6), vol.start) or summed:
        return "total"  # 'reduce-scatter + all-gather 是 2Ψ' is the sum of what was added up
    return "total" if re.match(r"\s*(?:=|in total)", after, re.I) else "plain"


def entities(clause: Clause) -> list[tuple[str, object, int, int]]:
    """Subject groups, operations and phases of a clause, in order: (kind, value, start, end)."""
    items = [("subject", s, a, b) for s, a, b, _ in subject_groups(clause)]
    items += [(c.kind, c.value, c.start, c.end) for c in of(clause.cues, "op", "phase")]
    return sorted(items, key=lambda e: e[2])


def _op_count(clause: Clause, op_start: int) -> float:
    """How many times an operation is said to run: a count right before it (两次 all-gather, 2·V_AG),
    right after it (AG×2), or later with no other operation between (all-gathers … twice)."""
    ops = [c for c in of(clause.cues, "op") if c.start == op_start]
    op_end = ops[0].end if ops else op_start
    later_op = min((c.start for c in of(clause.cues, "op") if c.start > op_start), default=len(clause.text))
    counts = of(clause.cues, "count")
    postfix = [c for c in counts if clause.text[c.start : c.end].lstrip()[:1] in "×x*" and 0 <= c.start - op_end <= 1]
    prefix = [
        c for c in counts if clause.text[c.start : c.end].lstrip()[:1] not in "×x*" and 0 <= op_start - c.end <= 4
    ]
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
    unnamed = _bound_entity(clause, vol) is None and not clause_subject(clause)
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
        subjects = subject_before(clause, start, ctx) or frozenset()
        allowed = [vocab.phase_volumes(s, value) for s in subjects]
        return (f"{value} 阶段", allowed[0]) if len(allowed) == 1 and allowed[0] else None
    return _subject_values(value, vocab) if role == "plain" else None


def _identified_op(clause: Clause, vol: Cue) -> str | None:
    """The operation an extra quantity is said to be ('多出来的 Ψ 是 all-reduce / the extra Ψ is an all-gather')."""
    if not re.match(IDENTITY, clause.text[vol.end :], re.I):
        return None
    ops = [c for c in of(clause.cues, "op") if c.start >= vol.end]
    return ops[0].value if ops else None


def _is_bare(clause: Clause, vol: Cue) -> bool:
    """A clause that is only a quantity ('，Ψ' / '(Ψ)' / '，通信量约 Ψ'): it belongs to what the previous clause
    named; words that only say what the number is (通信量, 约, 是, 共) name nothing of their own."""
    rest = clause.text[: vol.start] + " " * (vol.end - vol.start) + clause.text[vol.end :]
    for cue in of(clause.cues, "quantity", "hedge", "total_marker"):
        rest = rest[: cue.start] + " " * (cue.end - cue.start) + rest[cue.end :]
    return not re.sub(rf"[\s()（）。；;,，的是为约量又也]|{PER_RANK}", "", rest, flags=re.I)


def _bound_entity(clause: Clause, vol: Cue) -> tuple[str, object, int, int] | None:
    """What the quantity is given to ('Ψ 的 all-gather', 'Ψ 给前向的 all-gather', '2Ψ for DDP'), else the
    nearest entity before it."""
    follow = re.match(
        r"\s*(?:的|of|for|in|给|用于|用在|goes to|is spent on|\()\s*(?:(?:the|an?)\s+)?", clause.text[vol.end :], re.I
    )  # '(' labels a quantity: 'K (RS)'
    nxt = [e for e in entities(clause) if e[0] in ("op", "subject") and e[2] >= vol.end]  # '2Ψ for DDP'
    label = re.match(r"\s*\(([^()]*)\)", clause.text[vol.end :])
    listed = label and re.search(rf"{PLUS}|、|,|，|\band\b|和", label.group(1))  # '3Ψ (AG + AG + RS)' lists parts
    if follow and nxt and nxt[0][2] - (vol.end + follow.end()) <= 8 and not listed:
        return nxt[0]
    before = [e for e in entities(clause) if e[3] <= vol.start]
    return before[-1] if before else None


def _total_binding(clause: Clause, vol: Cue, ctx: Context) -> tuple[str, set[float]] | None:
    """A total (共/总计/=) is about the clause's subject; else it may sum the operations listed before it
    in the clause, or be the topic's total ('…; together with X and Y this gives 3Ψ')."""
    subject = clause_subject(clause)
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
    return subject_names(vocab, subjects), values if len(values) == 1 else set()


def volume_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
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
                found.append(
                    (
                        "quantity",
                        f"{named} 的{ctx.vocab.quantity_name}是 "
                        f"{_fmt({ctx.vocab.op_volume[named]}, ctx.vocab)}，此句说多出的 "
                        f"{_fmt({vol.value}, ctx.vocab)} 就是它",
                    )
                )
            elif not named:
                found += _relation_hints(clause, ctx, ("diff", vol.value), negated)
            continue
        bound = _accepted_for(clause, vol, ctx)
        if bound is None:
            continue
        what, allowed = bound
        if (vol.value in allowed or _exact_form(vol.value, allowed, ctx)) == negated:
            said = "说不是" if negated else "给出"
            found.append(
                (
                    "quantity",
                    f"{what} 的{ctx.vocab.quantity_name}应为 {_fmt(allowed, ctx.vocab)}，"
                    f"此句{said} {_fmt({vol.value}, ctx.vocab)}",
                )
            )
    return found


def repeat_volume_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'3mΨ': the quantity per repetition of a condition, checked against what the subject's step repeats under it."""
    found = []
    for vol in of(clause.cues, "repeat_volume"):
        condition, per = vol.value
        vocab = ctx.vocab.under(condition)
        subjects = subject_before(clause, vol.start, ctx) or _question_subjects(ctx) or frozenset()
        values = {vocab.repeated_volume(s) for s in subjects}
        negated = bool(negations(clause, 0, vol.start)) != bool(
            between(clause.cues, "postneg", vol.end, len(clause.text) + 1)
        )
        if len(values) == 1 and (per in values) == negated:
            m = vocab.conditions[condition].repeat_name
            found.append(
                (
                    "quantity",
                    f"{vocab.conditions[condition].name}时 {subject_names(vocab, subjects)} 的"
                    f"{vocab.quantity_name}随 {m} 增长的部分为 {_fmt(values, vocab)}×{m}，"
                    f"此句{'说不是' if negated else '给出'} {_fmt({per}, vocab)}×{m}",
                )
            )
    return found


def _object_memory(clause: Clause, vol: Cue, prev_end: int, memory_end: int) -> bool:
    """'梯度 2Ψ → 2Ψ/N' / '优化器状态 12Ψ': an object's memory, not a collective's volume ('AG 参数 Ψ' is one)."""
    if memory_end >= 0 and re.fullmatch(
        r"\s*(?:→|->|降到|降至|变成|变为|to)\s*", clause.text[memory_end : vol.start], re.I
    ):
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
    if (
        of(clause.cues, "total_marker")
        and len(subject_groups(clause)) == 2
        and not of(clause.cues, "volume")
        and not re.search(rf"{PLUS}|/", clause.text)
    ):
        return ("ratio", 1.0)  # 'Z3 通信 = DDP', not 'V(Z3) / V(DDP) = 1.5'
    return None


def _counts_operations(clause: Clause, cue: Cue) -> bool:
    """'多一次 all-gather / one more all-gather' counts operations; it says nothing about volume."""
    ops = [c for c in of(clause.cues, "op") if c.start >= cue.end]
    return bool(ops) and bool(
        re.match(
            r"^\s*(?:了|出)?\s*(?:一次|一个|1\s*次|an?|one)?\s*\S{0,4}\s*$", clause.text[cue.end : ops[0].start], re.I
        )
    )


def possessed_entities(clause: Clause, ents: list) -> list:
    """'ZeRO-1 的 reduce-scatter / ZeRO-3's all-gather': the operation, not the subject, is the party."""
    out = []
    for i, e in enumerate(ents):
        nxt = ents[i + 1] if i + 1 < len(ents) else None
        if (
            e[0] == "subject"
            and nxt
            and nxt[0] == "op"
            and re.fullmatch(r"\s*(?:的|'s|中的|里的)\s*", clause.text[e[3] : nxt[2]], re.I)
        ):
            continue
        out.append(e)
    return out


def _parties(clause: Clause, ctx: Context) -> tuple[Party, Party] | None:
    """(A, B) of 'A 是 B 的 r 倍 / A 比 B 多'; B is the party after 比/是/与/than/of.

    Subjects are the parties; an operation is one only as the compared-with party, as the possessed
    thing ('ZeRO-1 的 reduce-scatter') or when no subject is named, not when it is the extra item.
    A clause that opens with its comparison ('，比 all-reduce 少一半') compares the previous clause's party.
    """
    ents = possessed_entities(clause, [e for e in entities(clause) if e[0] in ("subject", "op")])
    target = [e for e in ents if re.search(RATIO_TARGET_BEFORE, clause.text[: e[2]], re.I)]
    if len(target) > 1 and target[0] is ents[0]:  # '快两倍是 RS 只有 AR 的一半': the first 是 frames the clause
        target = target[1:]
    others = [e for e in ents if e not in target]
    if any(e[0] == "subject" for e in ents):
        others = [e for e in others if e[0] == "subject"]
    if not target and (others and all(e[0] == "op" for e in others) or not others and not _bare_ratio(clause)):
        return None  # 'replacing A by B costs nothing extra', '3 × 7B': no comparison of two parties
    b = target[0][1] if target else (others[1][1] if len(others) > 1 else None)
    elided = re.match(
        r"\s*(?:比|相比|than|compared|(?:约|大约)?(?:是|为|等于)|(?:只|仅)(?:有|占|是|为)|相当于"
        r"|(?:which\s+)?(?:is|equals))",
        clause.text,
        re.I,
    )  # '，比 AR 少一半' / '，是 AR 的一半' / '，只有 AR 的一半': the previous party
    pronoun = not others and re.search(PRONOUN, clause.text[: target[0][2] if target else len(clause.text)], re.I)
    like = ctx.last_party if (elided or pronoun) and isinstance(ctx.last_party, type(b)) else None  # like with like
    a = others[0][1] if others else (like or ctx.topic or _question_subjects(ctx))
    baseline = ctx.vocab.baseline
    if b is None and isinstance(a, frozenset) and baseline and a != frozenset({baseline}):
        b = frozenset({baseline})
    return (a, b) if a is not None and b is not None and a != b else None


def _bare_ratio(clause: Clause) -> bool:
    """A clause that is only a ratio ('，翻了一倍'): it compares the topic with the baseline."""
    ratio = of(clause.cues, "ratio")
    rest = clause.text[: ratio[0].start] + clause.text[ratio[0].end :] if ratio else clause.text
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
    return party if isinstance(party, str) else subject_names(vocab, party)


def _relation_hints(
    clause: Clause, ctx: Context, relation: tuple[str, float] | None, negated: bool
) -> list[tuple[str, str]]:
    """Check a stated comparison between two parties' quantities."""
    parties = _parties(clause, ctx) if relation else None
    if parties is None:
        return []
    kind, value = relation
    a, b = parties
    for va in _volume_of(a, ctx.vocab):
        for vb in _volume_of(b, ctx.vocab):
            if _holds(kind, value, va, vb) == negated:
                return [
                    (
                        "quantity",
                        f"{_party_name(a, ctx.vocab)}（{_fmt({va}, ctx.vocab)}）与 "
                        f"{_party_name(b, ctx.vocab)}（{_fmt({vb}, ctx.vocab)}）的"
                        f"{ctx.vocab.quantity_name}关系与此句所说不符",
                    )
                ]
    return []


def comparison_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'ZeRO-3 的通信量是 DDP 的两倍' style claims (no explicit kΨ needed)."""
    if of(clause.cues, "speed") or not (entities(clause) or _bare_ratio(clause) and ctx.topic):
        return []
    if any(_role(clause, v) == "increment" for v in of(clause.cues, "volume")):
        return []
    relation = _relation(clause)
    if relation is None:
        return []
    first = min(c.start for c in clause.cues if c.kind in ("ratio", "percent", "same", "more", "less", "total_marker"))
    negated = bool(negations(clause, 0, first)) != bool(of(clause.cues, "postneg"))
    return _relation_hints(clause, ctx, relation, negated)


def phase_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """An operation said to run in a phase where the subject's step has none ('ZeRO-3 优化器步后 all-gather')."""
    found = []
    if own_negation(clause):
        return found
    ops = of(clause.cues, "op")
    for op in ops:
        phases = [p for p in of(clause.cues, "phase") if len(ops) == 1 or abs(p.start - op.start) < 24]
        subjects = subject_before(clause, op.start, ctx) or _question_subjects(ctx)
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
            if not re.search(r"(?:那次|这次|那个|这个|该|(?<![A-Za-z])(?:that|this))\s*$", c.text[: op.start], re.I):
                listed[op.value] += int(_op_count(c, op.start))  # '多出来那次 AG' refers back, it adds none
    for whole, parts in vocab.op_parts.items():  # 'all-reduce = RS + AG' is a derivation, not three collectives
        if parts and whole in listed and all(p in listed for p in parts):
            del listed[whole]
    return _in_parts(listed, vocab)


def composition_hints(clauses: list[Clause], ctx: Context) -> list[tuple[str, str, str]]:
    """A sentence that lists a subject's whole step (its operations add up to the step's total) but wrongly.

    '3Ψ = 三次 all-gather' adds up to ZeRO-3's 3Ψ, yet its step is two all-gathers and a reduce-scatter.
    """
    vocab = ctx.vocab
    fallback = ctx.topic or _question_subjects(ctx)
    subjects = {s for c in clauses for s, _, _, comp in subject_groups(c) if not comp} or (
        {fallback} if fallback else set()
    )
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
    if (
        sum(listed.values()) < 2
        or total is None
        or listed == step
        or not (summed or stated)
        or not (adds_up or summed and total in stated)
    ):
        return []
    parts = " + ".join(f"{n}×{o}" for o, n in sorted(step.items()))
    return [
        (
            "quantity",
            asserted[0].sentence,
            f"{vocab.subjects[subject].name} 的 {_fmt({total}, vocab)} 由 {parts} 组成，此句列出的不同",
        )
    ]
