"""Hints for graders: sentences of a short answer that look like one of a lesson's 一票否决项.

A hint never decides anything; it points a human grader at a sentence worth a second look.
The reader (course.hints.reader) cuts the answer into clauses and cues; this module reads it clause by
clause, and the claim modules (course.hints.partition, quantity, limit) read claims off the cues and check
them against the facts of the lesson's vocabulary (course.hints.vocabulary, from lessons/lessonNN/veto_hints.yml):

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
from dataclasses import dataclass, replace

from course.hints.discourse import Context, Frame, clause_agent, clause_subject
from course.hints.limit import limit_hints
from course.hints.partition import check_shard, objects_of, predicates_of, shard_claims
from course.hints.quantity import (
    comparison_hints,
    composition_hints,
    entities,
    is_quantity,
    phase_hints,
    possessed_entities,
    repeat_volume_hints,
    volume_hints,
)
from course.hints.reader import WH_QUESTION, Clause, clauses_of, negated_after, normalise, of, scan
from course.hints.vocabulary import Vocabulary


@dataclass(frozen=True)
class VetoHint:
    """One sentence that looks like a veto item, with why, for a human grader to judge."""

    veto_id: str
    question: str | None
    sentence: str
    reason: str


def _frame_after(clause: Clause, ctx: Context) -> Frame:
    """The predicate frame an elliptic follower of this clause would borrow: the latest predicate."""
    preds = predicates_of(clause)
    objects = objects_of(clause.cues) or ctx.frame.objects
    limit = bool(of(clause.cues, "limit", "capacity"))
    if preds or limit:
        return Frame(objects, preds[-1].kind != "whole" if preds else None, limit)
    return replace(ctx.frame, objects=objects)


def _read_clause(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """All findings (claim kind, reason) of one asserted clause."""
    found: list[tuple[str, str]] = []
    if not clause.hypothetical:
        for claim in shard_claims(clause, ctx):
            found += check_shard(claim, ctx.vocab)
        if is_quantity(clause, ctx):
            found += (
                volume_hints(clause, ctx)
                + repeat_volume_hints(clause, ctx)
                + comparison_hints(clause, ctx)
                + phase_hints(clause, ctx)
            )
    return found + limit_hints(clause, ctx)


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
    subject = clause_subject(clause)
    if subject and not clause.aside and clause.opener != "replace_neg":  # 'It is ZeRO-3, not ZeRO-2, that …'
        ctx.topic = subject
    if of(clause.cues, "other_agent") or of(clause.cues, "subject", "own_agent"):
        ctx.agent = clause_agent(clause, ctx)
    if clause.introduces and objects_of(clause.cues):
        ctx.announced = (clause.index, objects_of(clause.cues))
    if clause.introduces and predicates_of(clause):  # '分片：' / '不常驻完整参数：' announces items with its polarity
        ctx.listing = clause.index
        preds = predicates_of(clause)
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
    ctx.prev_entity = (entities(clause) or [None])[-1]
    ctx.introduced = clause.introduces
    ents = possessed_entities(clause, [e for e in entities(clause) if e[0] in ("subject", "op")])
    if ents:
        ctx.last_party = ents[0][1]


def find_veto_hints(text: str, vocab: Vocabulary | None, question: str | None = None) -> list[VetoHint]:
    """Sentences of a student's answer that look like a veto item (hints for a grader, not verdicts)."""
    if vocab is None:
        return []
    plain = normalise(text)[0]
    ranks = (
        frozenset(int(n) for n in re.findall(rf"(?:{vocab.divisor})\s*=\s*(\d+)(?![\d.])", plain) if int(n) > 1)
        if vocab.divisor
        else frozenset()
    )
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
            for kind, where, reason in composition_hints(sentence, _under_condition(ctx, sentence[0].index)):
                add(kind, where, reason)
            sentence = []
        if not interrogative:
            sentence.append(clause)
        _set_condition(clause, ctx)
        if not (interrogative or clause.reported):  # a question's predicate still frames a bare answer (能否…？不能)
            for kind, reason in _read_clause(clause, _under_condition(ctx, clause.index)):
                add(kind, clause.sentence, reason)
        _advance(clause, ctx)
    for kind, where, reason in composition_hints(sentence, _under_condition(ctx, index)) if sentence else ():
        add(kind, where, reason)
    return list(hints.values())
