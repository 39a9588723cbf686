"""Veto hints for lesson 5: negation, contrast, stage binding, volumes, and the labelled benchmark."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks.veto_hints import FIXTURES, load_answers, predictions, score
from course.errors import CourseError
from course.grading.veto_hints import VETO_IDS, VetoHint, find_veto_hints


def ids(text: str, question: str | None = None) -> set[str]:
    """The veto ids hinted for an answer."""
    return {h.veto_id for h in find_veto_hints(text, question)}


# --- negation, contrast and reported speech ----------------------------------------------------


@pytest.mark.parametrize("text", [
    "激活不能被分片，因为各 rank 的激活互不相同。",
    "不是说 ZeRO-3 会分片激活，它分片的只是模型状态。",
    "有人以为 ZeRO-3 会分片激活，其实不会。",
    "ZeRO-3 分片的是参数而不是激活。",
    "ZeRO-3 能否分片激活？不能。",
    "如果激活也能被分片，ZeRO-3 就能解决长序列问题；可惜激活不能被 ZeRO 分片。",
    "It is a myth that ZeRO-3 shards activations.",
    "ZeRO-3 doesn't shard activations.",
    "序列并行可以沿序列维切分激活，而 ZeRO 不行。",
])
def test_negated_reported_or_other_technique_activation_claims_give_no_hint(text):
    assert "activation-shard" not in ids(text, "Q1")


@pytest.mark.parametrize("text", [
    "ZeRO-3 把激活也分片了。",
    "有人说 ZeRO-3 不能分片激活，但其实它可以分片激活。",
    "ZeRO-3 分片参数，激活也一样。",
    "ZeRO-3 能否分片激活？能。",
    "ZeRO 不仅分片模型状态，也分片激活。",
    "FSDP partitions the activations too.",
])
def test_asserted_activation_sharding_is_hinted(text):
    assert "activation-shard" in ids(text, "Q1")


def test_a_replacement_clause_borrows_the_predicate_with_its_own_polarity():
    assert ids("ZeRO-3 分片的不是参数，而是激活。") == {"shard-target", "activation-shard"}
    assert ids("ZeRO-3 分片的不是激活，而是参数。") == set()


def test_a_refuting_clause_cancels_the_claim_before_it():
    assert ids("有一种说法认为 ZeRO-3 的通信量是 2Ψ，这是错误的。") == set()
    assert ids("ZeRO-3 的通信量是 2Ψ，这很合理。") == {"comm-volume"}


def test_quoted_claims_are_not_the_students_own():
    assert ids("我起初把“ZeRO-2 的通信量是 3Ψ”读反了，ZeRO-2 的通信量是 2Ψ。") == set()
    assert ids("我起初读到 ZeRO-2 的通信量是 3Ψ，ZeRO-2 的通信量是 2Ψ。") == {"comm-volume"}


# --- which stage a claim is about --------------------------------------------------------------


@pytest.mark.parametrize(("text", "hinted"), [
    ("ZeRO-2 比 ZeRO-1 多分片了梯度。", False),
    ("ZeRO-2 比 ZeRO-1 多分片了参数。", True),
    ("在 ZeRO-1 的基础上，ZeRO-2 还分片梯度。", False),
    ("梯度在 ZeRO-1 中就已经被分片了。", True),
    ("ZeRO-1 只分片优化器状态。", False),
    ("ZeRO-2 只分片优化器状态。", True),
    ("ZeRO-3 不仅分片优化器状态和梯度，还分片参数。", False),
    ("ZeRO-3 并不分片参数。", True),
    ("ZeRO-3 计算某层时临时拼出该层的完整参数，用完即释放。", False),
    ("ZeRO-3 每卡常驻完整参数。", True),
    ("ZeRO-2 shards gradients and ZeRO-3 also shards parameters.", False),
    ("ZeRO-1 keeps full gradients; ZeRO-2 does not.", False),
    ("ZeRO-2 keeps full gradients, just like ZeRO-1.", True),
])
def test_shard_claims_bind_to_the_stage_they_are_about(text, hinted):
    assert ("shard-target" in ids(text)) is hinted


def test_the_topic_stage_carries_over_to_the_next_sentence():
    assert ids("ZeRO-2 省了梯度显存。它每卡只存 1/N_d 的参数。") == {"shard-target"}
    assert ids("ZeRO-2 省了梯度显存。它每卡只存 1/N_d 的梯度。") == set()


# --- communication volumes ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "hinted"), [
    ("all-reduce 的通信量是 2Ψ。", False),
    ("reduce-scatter 的通信量是 2Ψ。", True),
    ("reduce-scatter 的通信量为 Ψ/2。", True),
    ("reduce-scatter + all-gather 共 2Ψ。", False),
    ("all-gather 是 Ψ。", False),
    ("两次 all-gather 共 2Ψ，再加一次 reduce-scatter 的 Ψ。", False),
    ("ZeRO-3 的通信量是 2Ψ。", True),
    ("ZeRO-2 的通信量是 3Ψ。", True),
    ("ZeRO-1 通信量翻倍为 4Ψ。", True),
    ("$V_{ZeRO-3} = 3\\Psi$。", False),
    ("ZeRO-3 的通信量不是 2Ψ，而是 3Ψ。", False),
    ("ZeRO-3 needs one extra all-gather, so its volume is 3Ψ rather than 2Ψ.", False),
    ("ZeRO-3 的通信量比 ZeRO-2 多 50%。", False),
    ("ZeRO-3 的通信量是 DDP 的两倍。", True),
    ("ZeRO-2 的通信量并没有比 ZeRO-1 多。", False),
    ("ZeRO-3 比 ZeRO-2 多 2Ψ 的通信。", True),
    ("朴素 DP 一次 all-reduce；ZeRO-1 改成 reduce-scatter 和 all-gather，各 Ψ。", False),
    ("ZeRO-2 的显存是 2Ψ + 14Ψ/N_d。", False),
    ("ZeRO-2 比 ZeRO-1 省了 2Ψ 的梯度显存。", False),
])
def test_volumes_are_checked_against_what_they_bind_to(text, hinted):
    assert ("comm-volume" in ids(text)) is hinted


def test_an_unbound_volume_falls_back_to_the_question_stage():
    assert ids("通信量是 2Ψ。", "Q3") == {"comm-volume"}
    assert ids("通信量是 2Ψ。", "Q2") == set()
    assert ids("通信量是 2Ψ。") == set()


def test_a_from_to_change_checks_only_the_new_value():
    assert ids("通信从 2Ψ 增加到 3Ψ。", "Q3") == set()
    assert ids("通信从 3Ψ 增加到 4Ψ。", "Q3") == {"comm-volume"}


# --- unbounded scaling ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "hinted"), [
    ("N_d→∞ 时 ZeRO-3 的静态模型状态趋近于 0。", False),
    ("卡足够多时，ZeRO-3 每卡的参数、梯度、优化器状态都趋近于 0。", False),
    ("N_d→∞ 时 ZeRO-3 的总显存趋近于 0。", True),
    ("卡数足够多时，ZeRO-3 的显存可以无限降低。", True),
    ("加卡不能让 ZeRO-3 的显存无限降低。", False),
    ("静态显存趋近于 0，激活也一样。", True),
    ("静态显存趋近于 0，但激活不会。", False),
    ("ZeRO-3 让任意大的模型都能装下，只要卡够多。", True),
    ("As N_d goes to infinity, ZeRO-3's total memory per GPU goes to zero.", True),
])
def test_memory_going_to_zero_is_hinted_unless_limited_to_static_state(text, hinted):
    assert ("unbounded-scaling" in ids(text, "Q3")) is hinted


# --- the hint itself -------------------------------------------------------------------------------


def test_a_hint_quotes_the_original_sentence_and_carries_the_question():
    hints = find_veto_hints("ZeRO-1 只分片优化器状态。ZeRO-3 的通信量是 “2Ψ” 吗？ZeRO-3 把激活也切分了。", "Q1")
    assert hints == [VetoHint("activation-shard", "Q1", "ZeRO-3 把激活也切分了", hints[0].reason)]
    assert "激活" in hints[0].reason


def test_one_sentence_gives_at_most_one_hint_per_veto():
    hints = find_veto_hints("ZeRO-1 把参数和梯度都分片了，ZeRO-2 也把参数分片了。")
    assert [h.veto_id for h in hints] == ["shard-target"]


def test_empty_answer_has_no_hints():
    assert find_veto_hints("") == []


# --- the labelled answers ----------------------------------------------------------------------------


def test_labelled_answers_cover_every_veto_kind_and_split():
    answers = load_answers()
    assert len(answers) >= 80
    positives = Counter(v for a in answers for v in a["expected"])
    assert all(positives[v] >= 10 for v in VETO_IDS), positives
    assert {a["kind"] for a in answers} == {"correct", "partial", "veto", "tricky-negation", "english", "mixed"}
    for split in ("dev", "heldout"):
        assert all(any(v in a["expected"] for a in answers if a["split"] == split) for v in VETO_IDS)


def test_precision_and_recall_per_veto_are_at_least_0_9():
    answers = load_answers()
    predicted = predictions(answers)
    for veto_id in VETO_IDS:
        s = score(answers, predicted, veto_id)
        assert s.precision >= 0.9 and s.recall >= 0.9, (veto_id, s)


def test_malformed_labels_are_reported_with_file_and_answer(tmp_path: Path):
    bad = tmp_path / "answers.yml"
    bad.write_text("- {id: x-1, text: 'ZeRO-3', question: Q1, kind: veto, split: dev, expected: [nope]}\n",
                   encoding="utf-8")
    with pytest.raises(CourseError, match=r"answers\.yml, cell x-1: expected ids in"):
        load_answers(bad)
    assert FIXTURES.exists()
