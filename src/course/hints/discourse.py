"""What the veto-hint reader carries from clause to clause of one answer, and who and what a clause is about."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from course.hints.reader import COMPARATIVE_AFTER, COMPARATIVE_BEFORE, GROUP_JOINER, Clause, of
from course.hints.vocabulary import Vocabulary

Party = frozenset | str  # a group of subjects, or an operation


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


def subject_groups(clause: Clause) -> list[tuple[frozenset[str], int, int, bool]]:
    """Coordinated subject mentions ('ZeRO-1 和 ZeRO-2') as (subjects, start, end, comparative)."""
    groups: list[list] = []
    for cue in of(clause.cues, "subject"):
        if groups and re.match(GROUP_JOINER, clause.text[groups[-1][2] : cue.start], re.I):
            groups[-1][0] = groups[-1][0] | cue.value
            groups[-1][2] = cue.end
        else:
            groups.append([cue.value, cue.start, cue.end])
    onwards = r"\s*(?:on(?![A-Za-z])|onwards|upwards|起|开始)"  # 'from stage 2 on' includes stage 2
    out = []
    for i, (s, a, b) in enumerate(groups):
        after = re.match(COMPARATIVE_AFTER, clause.text[b:])  # '与 B 相比', but in 'A 相比 B' A is the subject
        followed = after and i + 1 < len(groups) and groups[i + 1][1] - (b + after.end()) < 4
        comparative = (
            re.search(COMPARATIVE_BEFORE, clause.text[:a], re.I)
            and not re.match(onwards, clause.text[b:])
            or after
            and not followed
        )
        out.append((s, a, b, bool(comparative)))
    return [g for g in out if g[0]]


def clause_subject(clause: Clause) -> frozenset[str] | None:
    """The first non-comparative subject group of a clause: what the clause is about."""
    return next((s for s, _, _, comp in subject_groups(clause) if not comp), None)


def subject_before(clause: Clause, pos: int, ctx: Context) -> frozenset[str] | None:
    """The nearest non-comparative subject group before a position, else one after it in the clause
    (passive: 'parameters are sharded in ZeRO-3'), else the topic."""
    own = [(a, s) for s, a, _, comp in subject_groups(clause) if not comp]
    before = [s for a, s in own if a < pos]
    return before[-1] if before else own[0][1] if own else ctx.topic


def clause_agent(clause: Clause, ctx: Context) -> str:
    """Who the clause says does the partitioning: the lesson's technique (default) or another one."""
    if of(clause.cues, "other_agent"):
        return "other"
    if of(clause.cues, "subject", "own_agent"):
        return "own"
    return ctx.agent


def subject_names(vocab: Vocabulary, subjects: Iterable[str]) -> str:
    """'ZeRO-1/ZeRO-2' in the vocabulary's order."""
    order = list(vocab.subjects)
    return "/".join(vocab.subjects[s].name for s in sorted(subjects, key=order.index))
