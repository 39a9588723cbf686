"""Veto hints: the generic reader with lesson 5's vocabulary (negation, contrast, subject binding,
volumes, step composition), vocabulary loading and validation, and the labelled benchmark."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks import veto_hints as bench
from benchmarks.veto_hints import FIXTURES, VOICES, load_answers, load_tuning, predictions, score
from course.errors import CourseError
from course.hints.find import VetoHint, find_veto_hints
from course.hints.vocabulary import lesson_vocabulary, load_vocabulary

ROOT = Path(__file__).resolve().parents[2]
LESSON05 = load_vocabulary(ROOT / "lessons" / "lesson05" / "veto_hints.yml")
VETO_IDS = ("shard-target", "activation-shard", "comm-volume", "unbounded-scaling")


def ids(text: str, question: str | None = None) -> set[str]:
    """The veto ids hinted for an answer to a lesson-5 question."""
    return {h.veto_id for h in find_veto_hints(text, LESSON05, question)}


# --- negation, contrast and reported speech ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "激活不能被分片，因为各 rank 的激活互不相同。",
        "不是说 ZeRO-3 会分片激活，它分片的只是模型状态。",
        "有人以为 ZeRO-3 会分片激活，其实不会。",
        "ZeRO-3 分片的是参数而不是激活。",
        "ZeRO-3 能否分片激活？不能。",
        "如果激活也能被分片，ZeRO-3 就能解决长序列问题；可惜激活不能被 ZeRO 分片。",
        "It is a myth that ZeRO-3 shards activations.",
        "ZeRO-3 doesn't shard activations.",
        "序列并行可以沿序列维切分激活，而 ZeRO 不行。",
    ],
)
def test_negated_reported_or_other_technique_activation_claims_give_no_hint(text):
    assert "activation-shard" not in ids(text, "Q1")


@pytest.mark.parametrize(
    "text",
    [
        "ZeRO-3 把激活也分片了。",
        "有人说 ZeRO-3 不能分片激活，但其实它可以分片激活。",
        "ZeRO-3 分片参数，激活也一样。",
        "ZeRO-3 能否分片激活？能。",
        "ZeRO 不仅分片模型状态，也分片激活。",
        "FSDP partitions the activations too.",
    ],
)
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


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
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
    ],
)
def test_shard_claims_bind_to_the_stage_they_are_about(text, hinted):
    assert ("shard-target" in ids(text)) is hinted


def test_the_topic_stage_carries_over_to_the_next_sentence():
    assert ids("ZeRO-2 省了梯度显存。它每卡只存 1/N_d 的参数。") == {"shard-target"}
    assert ids("ZeRO-2 省了梯度显存。它每卡只存 1/N_d 的梯度。") == set()


# --- communication volumes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
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
    ],
)
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


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
        ("N_d→∞ 时 ZeRO-3 的静态模型状态趋近于 0。", False),
        ("卡足够多时，ZeRO-3 每卡的参数、梯度、优化器状态都趋近于 0。", False),
        ("N_d→∞ 时 ZeRO-3 的总显存趋近于 0。", True),
        ("卡数足够多时，ZeRO-3 的显存可以无限降低。", True),
        ("加卡不能让 ZeRO-3 的显存无限降低。", False),
        ("静态显存趋近于 0，激活也一样。", True),
        ("静态显存趋近于 0，但激活不会。", False),
        ("ZeRO-3 让任意大的模型都能装下，只要卡够多。", True),
        ("As N_d goes to infinity, ZeRO-3's total memory per GPU goes to zero.", True),
    ],
)
def test_memory_going_to_zero_is_hinted_unless_limited_to_static_state(text, hinted):
    assert ("unbounded-scaling" in ids(text, "Q3")) is hinted


# --- the hint itself -------------------------------------------------------------------------------


def test_a_hint_quotes_the_original_sentence_and_carries_the_question():
    hints = find_veto_hints(
        "ZeRO-1 只分片优化器状态。ZeRO-3 的通信量是 “2Ψ” 吗？ZeRO-3 把激活也切分了。", LESSON05, "Q1"
    )
    assert hints == [VetoHint("activation-shard", "Q1", "ZeRO-3 把激活也切分了", hints[0].reason)]
    assert "激活" in hints[0].reason


def test_one_sentence_gives_at_most_one_hint_per_veto():
    hints = find_veto_hints("ZeRO-1 把参数和梯度都分片了，ZeRO-2 也把参数分片了。", LESSON05)
    assert [h.veto_id for h in hints] == ["shard-target"]


def test_empty_answer_has_no_hints():
    assert find_veto_hints("", LESSON05) == []


# --- the failure kinds seen on independently written answers (issue 11) ------------------------


@pytest.mark.parametrize(
    "text",
    [
        "all-reduce 的通信量是 2K，而 reduce-scatter 只有 K。",
        "ZeRO-1 的 reduce-scatter 是 K，比 all-reduce 的 2K 少一半，再加 all-gather 的 K，总共还是 2K。",
        "用 reduce-scatter（每卡只留所需分片，通信量 K）替代 all-reduce（每卡全量，通信量 2K）。",
        "all-reduce 的通信量是 reduce-scatter 的两倍。",
        "all-reduce = reduce-scatter + all-gather，所以 ZeRO-1 通信量不变。",
        "因为 all-reduce 本身就等于 reduce-scatter 加 all-gather，两者各 Ψ，合起来 2Ψ。",
        "An all-reduce is a reduce-scatter followed by an all-gather, each moving Ψ, so 2Ψ in total.",
    ],
)
def test_correct_collective_comparisons_and_the_all_reduce_derivation_give_no_hint(text):
    assert ids(text, "Q2") == set()


@pytest.mark.parametrize(
    "text",
    [
        "ZeRO-2 doesn't shard the parameters.",
        "ZeRO-2 doesn’t shard the parameters.",
        "ZeRO-2 (which doesn't shard the parameters) saves the gradient memory.",
        "ZeRO-3 shards the parameters, whereas ZeRO-2 doesn't shard the parameters.",
        "Neither ZeRO-1 nor ZeRO-2 shards the parameters.",
        "ZeRO-2 shards the gradients as well. It doesn't shard the parameters, though.",
    ],
)
def test_english_negation_of_parameter_sharding_gives_no_hint(text):
    assert ids(text, "Q2") == set()


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
        ("ZeRO-3 的 3Ψ：前向 all-gather 参数 Ψ，反向 all-gather 参数 Ψ，优化器更新后再 all-gather 参数 Ψ。", True),
        (
            "ZeRO-3: forward all-gather Ψ, backward all-gather Ψ, "
            "plus an all-gather after the optimizer step Ψ, 3Ψ total.",
            True,
        ),
        ("ZeRO-3 需要三次 all-gather，共 3Ψ。", True),
        ("ZeRO-3: 前向 all-gather Ψ，反向 reduce-scatter Ψ，优化器步后 all-gather Ψ，共 3Ψ。", True),
        ("ZeRO-3 每步：前向 all-gather 参数、反向再 all-gather 参数、反向 reduce-scatter 梯度，共 3Ψ。", False),
        ("3Ψ = 前向逐层 all-gather 参数（Ψ）+ 反向再次 all-gather（Ψ，用完即弃）+ reduce-scatter 梯度（Ψ）。", False),
        ("ZeRO-1 在反向 reduce-scatter 梯度，优化器更新后 all-gather 参数，共 2Ψ。", False),
        ("ZeRO-3 比 ZeRO-2 多一次 all-gather，所以是 3Ψ。", False),
    ],
)
def test_a_3psi_with_a_wrong_part_is_hinted(text, hinted):
    assert ("comm-volume" in ids(text, "Q3")) is hinted


def test_a_hint_quotes_the_sentence_as_written_even_with_full_width_punctuation():
    hints = find_veto_hints("ZeRO-2（它还分片参数）省显存。", LESSON05, "Q2")
    assert [(h.veto_id, h.sentence) for h in hints] == [("shard-target", "ZeRO-2（它还分片参数）省显存")]


# --- vocabularies: one per lesson, validated ----------------------------------------------------

TOY = """\
version: 1
vetoes: {partition: split-wrong, quantity: volume-wrong}
subjects:
  col: {name: 列切分, partitions: [weight], step: [{phase: [fwd], op: gather}]}
  row: {name: 行切分, partitions: [weight, out], step: [{phase: [fwd], op: gather}, {phase: [fwd], op: gather}]}
subject_words:
  - {pattern: '列切分|column[\\s-]parallel', subjects: [col]}
  - {pattern: '行切分|row[\\s-]parallel', subjects: [row]}
objects:
  weight: {name: 权重, zh: ['权重'], en: ['weights?']}
  out: {name: 输出, zh: ['输出'], en: ['outputs?']}
operations:
  gather: {volume: 1, zh: ['all[\\s-]?gather']}
phases:
  fwd: {zh: ['前向'], en: ['forward']}
words:
  unit: {zh: ['B']}
  partition: {zh: ['切分', '切开'], en: ['split']}
  quantity: {zh: ['通信']}
"""


def _toy(tmp_path: Path, text: str = TOY) -> Path:
    path = tmp_path / "lessons" / "lesson07" / "veto_hints.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def test_another_lessons_vocabulary_drives_the_same_reader(tmp_path):
    vocab = lesson_vocabulary(tmp_path / "lessons", "lesson07")
    assert vocab is None  # nothing declared yet: no hints at all
    assert find_veto_hints("ZeRO-3 把激活也分片了，通信量是 2Ψ。", vocab, "Q1") == []
    _toy(tmp_path)
    vocab = lesson_vocabulary(tmp_path / "lessons", "lesson07")
    hinted = {h.veto_id for h in find_veto_hints("列切分不切分权重。列切分的通信量是 2B。", vocab)}
    assert hinted == {"split-wrong", "volume-wrong"}
    assert find_veto_hints("列切分把权重切开，通信量是 B；行切分不是这样的。", vocab) == []
    assert find_veto_hints("ZeRO-3 把激活也分片了，通信量是 2Ψ。", vocab, "Q1") == []  # lesson 5's facts stay home


def test_lesson05_vocabulary_names_only_rubric_vetoes():
    from course.grading.rubric import load_rubric

    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    assert set(LESSON05.vetoes.values()) == {v.id for v in rubric.vetoes} == set(VETO_IDS)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("partitions: [weight]", "partitions: [wieght]"),
            r"lesson07/veto_hints\.yml, line 4: subjects/col/partitions/0: 'wieght' is not a declared object",
        ),
        (
            ("zh: ['切分', '切开']", "zh: ['切分(']"),
            r"lesson07/veto_hints\.yml, line \d+: words/partition/zh/0: not a valid regular expression",
        ),
        (
            ("vetoes: {partition", "vetos: {partition"),
            r"lesson07/veto_hints\.yml, line 1: \(top level\): missing key 'vetoes'",
        ),
        (("{volume: 1, zh", "{zh"), r"lesson07/veto_hints\.yml, line \d+: operations/gather"),
        (
            ("op: gather}]}\n  row", "op: scatter}]}\n  row"),
            r"subjects/col/step/0/op: 'scatter' is not a declared operation",
        ),
        (
            ("'列切分|column[\\s-]parallel', subjects: [col]", "'列切分', numbered: {'1': col}"),
            r"subject_words/0/pattern: expected a group \(\?P<n>",
        ),
    ],
)
def test_a_bad_vocabulary_names_file_line_and_key(tmp_path, change, message):
    old, new = change
    assert old in TOY
    path = _toy(tmp_path, TOY.replace(old, new))
    with pytest.raises(CourseError, match=message):
        load_vocabulary(path)


TOY_CONDITION = """\
conditions:
  pipelined:
    name: 流水
    zh: ['流水']
    repeat: {name: k, zh: ['k']}
    steps:
      col: [{phase: [fwd], op: gather, repeated: true}]
"""


def test_a_condition_changes_the_step_its_sentence_is_read_with(tmp_path):
    vocab = load_vocabulary(_toy(tmp_path, TOY + TOY_CONDITION))
    assert find_veto_hints("流水时，列切分的通信量是 kB。", vocab) == []
    assert [h.veto_id for h in find_veto_hints("流水时，列切分的通信量是 2kB。", vocab)] == ["volume-wrong"]
    assert [h.veto_id for h in find_veto_hints("不流水时，列切分的通信量是 2B。", vocab)] == ["volume-wrong"]
    assert find_veto_hints("流水时，列切分的通信量是 2B。", vocab) == []  # it grows with k: no fixed value to check


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("steps:\n      col:", "steps:\n      cols:"),
            r"lesson07/veto_hints\.yml, line \d+: conditions/pipelined/steps/cols: 'cols' is not a declared subject",
        ),
        (
            ("op: gather, repeated", "op: scatter, repeated"),
            r"conditions/pipelined/steps/col/0/op: 'scatter' is not a declared operation",
        ),
        (
            ("    repeat: {name: k, zh: ['k']}\n", ""),
            r"conditions/pipelined/steps/col/0/repeated: only a step under a condition with 'repeat' words",
        ),
        (("    zh: ['流水']\n", ""), r"lesson07/veto_hints\.yml, line \d+: conditions/pipelined"),
    ],
)
def test_a_bad_condition_names_file_line_and_key(tmp_path, change, message):
    old, new = change
    assert old in TOY_CONDITION
    with pytest.raises(CourseError, match=message):
        load_vocabulary(_toy(tmp_path, TOY + TOY_CONDITION.replace(old, new)))


def test_the_report_asks_the_lessons_own_vocabulary(tmp_path):
    from course.grading.report_evidence import grader_hints
    from course.grading.report_model import Submission

    answer = Submission("ada", (), (), 0.0, {"Q1": "ZeRO-3 把激活也分片了。"})
    assert [h.veto_id for h in grader_hints(answer, LESSON05)] == ["activation-shard"]
    assert grader_hints(answer, lesson_vocabulary(tmp_path, "lesson07")) == ()


# --- the labelled answers ----------------------------------------------------------------------------


def test_labelled_answers_cover_every_veto_and_many_voices():
    answers = load_tuning()
    assert len(answers) == len(load_answers(FIXTURES)) + len(load_answers(VOICES)) >= 800
    positives = Counter(v for a in answers for v in a["expected"])
    assert all(positives[v] >= 20 for v in VETO_IDS), positives
    kinds = {a["kind"] for a in answers}
    assert {"terse", "long", "mixed", "formula", "hedged", "english"} <= kinds, kinds


# The voices file is short of the 0.9 aim on precision (benchmarks/README.md has the numbers): its floor keeps
# what was won.
@pytest.mark.parametrize(
    ("path", "precision", "recall"), [(FIXTURES, 0.9, 0.9), (VOICES, 0.6, 0.88)], ids=["own", "voices"]
)
def test_precision_and_recall_per_veto_on_each_tuning_file_hold(path, precision, recall):
    answers = load_answers(path)
    predicted = predictions(answers, LESSON05)
    for veto_id in VETO_IDS:
        s = score(answers, predicted, veto_id)
        assert s.precision >= precision and s.recall >= recall, (path.name, veto_id, s)


def test_an_answer_id_in_two_tuning_files_is_reported(tmp_path, monkeypatch):
    one, two = tmp_path / "one.yml", tmp_path / "two.yml"
    for f in (one, two):
        f.write_text("- {id: x-1, text: 'ZeRO-3', question: Q1, kind: terse, expected: []}\n", encoding="utf-8")
    monkeypatch.setattr(bench, "TUNING", {"own": one, "voices": two})
    with pytest.raises(CourseError, match=r"two\.yml, cell x-1: answer id also appears in one\.yml"):
        load_tuning()


def test_malformed_labels_are_reported_with_file_and_answer(tmp_path: Path):
    bad = tmp_path / "answers.yml"
    bad.write_text("- {id: x-1, text: 'ZeRO-3', question: Q1, kind: veto, expected: [nope]}\n", encoding="utf-8")
    with pytest.raises(CourseError, match=r"answers\.yml, cell x-1: expected ids in"):
        load_answers(bad)
    assert FIXTURES.exists()


def test_the_benchmark_scores_the_untouched_split_apart_and_never_prints_its_answers(tmp_path, monkeypatch, capsys):
    untouched = tmp_path / "veto_answers_heldout.yml"
    untouched.write_text(
        "- {id: u-1, question: Q3, kind: terse, expected: [comm-volume], text: 'Z3 通信 2Ψ。'}\n"
        "- {id: u-2, question: Q1, kind: terse, expected: [], text: 'ZeRO-3 分片激活。'}\n"
        "- {id: u-3, question: Q2, kind: english, expected: [], text: 'ZeRO-2 shards gradients.'}\n",
        "utf-8",
    )
    monkeypatch.setattr(bench, "UNTOUCHED", untouched)
    assert bench.main(["--show-errors"]) == 0
    out = capsys.readouterr().out
    assert "untouched       comm-volume          1   1   0   0     1.000  1.000" in out
    assert "untouched       activation-shard     0   0   1   0     0.000  1.000" in out
    assert "untouched       terse                2     1  missed - / flagged activation-shard×1" in out
    assert "untouched       english              1     1  missed - / flagged -" in out
    assert "ZeRO-3 分片激活" not in out  # the untouched answers are scored, never shown
    tuning = {name: len(load_answers(path)) for name, path in bench.TUNING.items()}
    assert f"tuning          answers: {sum(tuning.values())}" in out
    assert all(f"{f'tuning ({name})':15} answers: {n}" in out for name, n in tuning.items())


# --- voices: formulas, hedges, terse and long answers -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            r"$V_{Z3} = \underbrace{\Psi}_{AG\,fwd} + \underbrace{\Psi}_{AG\,bwd} + \underbrace{\Psi}_{RS} = 3\Psi$",
            set(),
        ),
        (
            r"$V_{Z3} = \underbrace{\Psi}_{AG} + \underbrace{\Psi}_{AG} + \underbrace{\Psi}_{AG} = 3\Psi$",
            {"comm-volume"},
        ),
        (r"$M_{ZeRO-2} = 2\Psi + \frac{14\Psi}{N_d}$，通信量 $2\Psi$。", set()),
        (r"$\lim_{N_d \to \infty} M_{ZeRO-3} = 0$，所以总显存可以无限降低。", {"unbounded-scaling"}),
    ],
)
def test_latex_is_read_as_plain_text(text, expected):
    assert ids(text, "Q3" if "Z3" in text or "ZeRO-3" in text else "Q2") == expected


def test_a_hint_on_latex_quotes_the_formula_as_written():
    text = r"通信量：$V_{Z3} = 2\Psi$。"
    assert [h.sentence for h in find_veto_hints(text, LESSON05, "Q3")] == [text.rstrip("。")]


def test_hedges_neither_hide_nor_make_a_claim():
    assert ids("ZeRO-3 每步大约是 3Ψ，比 DDP 多一半。", "Q3") == set()
    assert ids("ZeRO-3 的通信量大概也是 2Ψ 左右吧。", "Q3") == {"comm-volume"}
    assert ids("我猜 ZeRO-2 应该已经把参数也切开了吧。", "Q2") == {"shard-target"}


def test_each_step_after_a_listed_decomposition_refers_to_its_parts():
    assert ids("all-reduce 可以拆成 reduce-scatter 和 all-gather 两步，每步 Ψ，合计 2Ψ。", "Q2") == set()
    assert ids("all-reduce 可以拆成 reduce-scatter 和 all-gather 两步，每步 2Ψ。", "Q2") == {"comm-volume"}


def test_a_terse_bare_volume_is_a_step_volume_only_when_the_answer_never_speaks_of_memory():
    assert ids("Z3：2Ψ，跟 Z2 一样。", "Q3") == {"comm-volume"}
    assert ids("Z3：参数显存 2Ψ/N_d。", "Q3") == set()


def test_gathering_a_full_copy_is_not_keeping_one():
    assert ids("ZeRO-3 每卡只保存 1/N_d 的参数，计算某层前先 all-gather 出这一层的完整参数。", "Q3") == set()
    assert ids("ZeRO-3 在 all-gather 之后每卡常驻完整参数。", "Q3") == {"shard-target"}


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # a belief the student corrects, or a first impression a contrast corrects, is not asserted
        ("一开始我以为 ZeRO-3 是 2Ψ，后来想明白了，反向还要再 all-gather 一次，所以是 3Ψ。", "Q3", set()),
        ("直觉上 ZeRO-2 好像会多通信，但算下来还是 reduce-scatter + all-gather，2Ψ，没有变。", "Q2", set()),
        ("ZeRO-3 的通信量不会因为加卡而变成 2Ψ，始终约为 3Ψ。", "Q3", set()),
        # a bare answer to a wh-question, and list items after an announcing predicate, borrow the predicate
        ("问：ZeRO-1 分片了什么？答：梯度和优化器状态。", "Q2", {"shard-target"}),
        ("分片：Z1 opt+grad，Z2 opt+grad+param。", "Q2", {"shard-target"}),
        ("分片：Z1 opt，Z2 opt+grad，Z3 opt+grad+param。", "Q2", set()),
        # notations and numbers
        ("P_os+g 阶段（ZeRO-2）把参数也切了。", "Q2", {"shard-target"}),
        ("ZeRO 第二阶段把参数和梯度都分片了。", "Q2", {"shard-target"}),
        ("按 BF16 算，ZeRO-1 每步通信 2Ψ 个元素，也就是 4Ψ 字节，和 DDP 一样。", "Q2", set()),
        ("设参数量为 K，DDP 每卡通信 2K；ZeRO-1 为 K（RS）+ K（AG）= 2K。", "Q2", set()),
        ("设参数量为 K，ZeRO-1 为 2K（RS）+ K（AG）= 3K。", "Q2", {"comm-volume"}),
        ("ZeRO-3 sends three times as much data as DDP.", "Q3", {"comm-volume"}),
        ("ZeRO-3 raises the communication of DDP by half.", "Q3", set()),
        ("Z3 通信 = DDP。", "Q3", {"comm-volume"}),
        # comparisons, standards and passives
        ("ZeRO-2 = ZeRO-1 + gradient sharding；comm 不变（RS + AG）。", "Q2", set()),
        ("ZeRO-2 相比 ZeRO-1 多切了参数。", "Q2", {"shard-target"}),
        ("Activations don't get sharded by FSDP the way the weights do.", "Q1", set()),
        ("Activations get sharded by FSDP just like the weights.", "Q1", {"activation-shard"}),
        ("Parameters are already partitioned from stage 2 on.", "Q2", {"shard-target"}),
        ("Parameters aren't partitioned until stage 3.", "Q2", set()),
        ("Going from ZeRO-1 to ZeRO-2, each GPU stops holding the full parameters.", "Q2", {"shard-target"}),
    ],
)
def test_voices_found_while_growing_the_tuning_set(text, question, expected):
    assert ids(text, question) == expected


# --- causes found on the demo class's full-marks answers (demo/classes/lesson05/zhangsan) ------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a clause that only states the number ('，通信量约 Ψ') belongs to the operation the clause before named
        ("reduce-scatter 让每个 rank 只拿到自己那一片的归约结果，通信量约 Ψ，是 all-reduce（约 2Ψ）的一半。", set()),
        ("ZeRO-1 的通信量约 Ψ。", {"comm-volume"}),
        # '，是 all-reduce 的一半' compares the previous clause's party, not the question's stage
        ("reduce-scatter 的通信量约 Ψ，是 all-reduce（约 2Ψ）的一半。", set()),
        ("reduce-scatter 的通信量约 2Ψ，是 all-reduce 的一半。", {"comm-volume"}),
        # 不属于自己的 / 别的 rank 的 say whose gradients, they do not negate the sharding
        ("ZeRO-2 把梯度也分片：reduce-scatter 之后立刻释放不属于自己的梯度，每卡只存 2Ψ/N_d 的梯度。", set()),
        ("ZeRO-2 把梯度也分片：归约后释放别的 rank 的梯度。", set()),
        ("ZeRO-2 不分片梯度。", {"shard-target"}),
    ],
)
def test_whose_and_which_party_are_read_from_the_clause_before(text, expected):
    assert ids(text, "Q2") == expected


def test_the_demo_classs_full_marks_answers_get_no_hint():
    """zhangsan's answers are the demo's model answers: a hint there would send a grader after a correct student."""
    import nbformat

    notebook = nbformat.read(ROOT / "demo" / "classes" / "lesson05" / "zhangsan" / "lesson05.ipynb", as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"].removeprefix("answer-"): c.source
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("answer-")
    }
    assert set(answers) == {"Q1", "Q2", "Q3"}
    assert [(q, h.veto_id) for q, text in sorted(answers.items()) for h in find_veto_hints(text, LESSON05, q)] == []


def test_the_rubrics_own_key_points_get_no_hint():
    """The key points are what the rubric asks students to write: a hint on them would flag the model answer."""
    from course.grading.rubric import load_rubric

    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    hinted = [
        (q.id, point[:30], h.veto_id)
        for q in rubric.questions
        for point in q.key_points
        for h in find_veto_hints(point, LESSON05, q.id)
    ]
    assert hinted == []


# --- causes found on the voices file (tests/hints/fixtures/veto_answers_voices.yml) ---------------------------


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # mentions of collectives are a composition only where a sum or a total is written
        ("prefetch 提前一层 AG，把两次 AG 藏进计算。", "Q3", set()),
        ("ZeRO-3 = 三次 all-gather，共 3Ψ。", "Q3", {"comm-volume"}),
        # one clause that lists the step right is the composition; the next names its operations again
        ("ZeRO-1 用 RS + AG 代替 all-reduce：RS 梯度 Ψ，再 AG 参数 Ψ，合计 2Ψ。", "Q2", set()),
        # '快两倍是 RS 只有 AR 一半的量': the first 是 frames the clause, AR is the compared-with party
        ("“快两倍”是 RS 只有 AR 一半的量。", "Q2", set()),
        ("“快两倍”是 RS 只有 AR 两倍的量。", "Q2", {"comm-volume"}),
        # a pronoun compares the party just named
        ("RS 很省，因为它只是 AR 的一半。", "Q2", set()),
        # a share per item ('每项 ≈ Ψ', 'Ψ each') is not the step's total; a bare '每卡 ≈ Ψ' may be the item's
        ("3Ψ = 前向 AG + 反向 AG + RS，每项 ≈ Ψ。", "Q3", set()),
        ("Three pieces, ≈Ψ each: forward all-gather, backward all-gather and the reduce-scatter.", "Q3", set()),
        ("reduce-scatter 就够了，每卡 ≈ Ψ。", "Q2", set()),
        ("ZeRO-3 = 前向 all-gather Ψ + 反向 reduce-scatter Ψ，共 2Ψ。", "Q3", {"comm-volume"}),
        # what a colon announces is what the quantity after it is about
        ("- reduce-scatter：每卡收发约 Ψ。", "Q2", set()),
    ],
)
def test_quantities_bind_to_what_the_clause_lists_or_announces(text, question, expected):
    assert ids(text, question) == expected


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # a step's fresh output is not the stored state
        ("更新完以后各卡手里是不同的 1/N 新参数，于是再 all-gather 一次。", "Q2", set()),
        ("ZeRO-1 每卡只保存 1/N 的参数。", "Q2", {"shard-target"}),
        # a collective noun ('模型状态') is some of its members, not each one
        ("ZeRO-1/2：它们只切模型状态，激活各卡不同。", "Q1", set()),
        ("阶段一切 OS+G，阶段二切 OS+G+P。", "Q2", {"shard-target"}),
        # '每卡一份相同的拷贝' describes the baseline's redundancy
        ("ZeRO-1 不切梯度。参数/梯度/优化器状态每卡一份相同的拷贝。", "Q2", set()),
        ("ZeRO-2 的梯度每卡一份完整的拷贝。", "Q2", {"shard-target"}),
        # not replicated (different data) is not partitioned
        ("Activations aren't replicated across DP ranks.", "Q1", set()),
        ("Activations are partitioned across DP ranks.", "Q1", {"activation-shard"}),
        # a buffer is transient; keeping only its own shard is not 'shards only this object'
        ("ZeRO-3 需要单层全量参数缓冲。", "Q3", set()),
        ("ZeRO-2 saves gradient memory by keeping only its own shard.", "Q2", set()),
        # '用不到的梯度' is a modifier, not the predicate's negation
        ("ZeRO-2 把 RS 后用不到的梯度分片直接释放。", "Q2", set()),
        ("ZeRO-2 不把梯度分片。", "Q2", {"shard-target"}),
        # 'not necessarily fast' names nothing and borrows no predicate
        ("ZeRO-3 shards gradients. So ZeRO-3 makes training fit, not necessarily fast.", "Q3", set()),
        # an aside is cut at its commas
        ("SHARD_GRAD_OP 对应 ZeRO-2（梯度和优化器状态分片，参数不切）。", "Q2", set()),
        # receiving a full copy is not keeping one; 'X 是因为 Y' is one clause
        ("ZeRO-1 没必要让每卡都拿到完整的平均梯度。", "Q2", set()),
        ("ZeRO-1 能替换 all-reduce 是因为它只更新自己那部分参数。", "Q2", set()),
        # a limit said of one part only
        ("ZeRO-3 每卡静态状态 16Ψ/N_d——但趋近 0 的只是这一项，所以总显存不会无限下降。", "Q3", set()),
        ("ZeRO-3 的总显存趋近 0。", "Q3", {"unbounded-scaling"}),
    ],
)
def test_partition_and_limit_claims_read_by_their_cause(text, question, expected):
    assert ids(text, question) == expected


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # '…吧？' with a hedge and no question word asserts with doubt; a real question asserts nothing
        ("我觉得 ZeRO-1 的通信应该比 DP 多一点吧，大概 3Ψ？", "Q2", {"comm-volume"}),
        ("ZeRO-1 的通信是不是 3Ψ？", "Q2", set()),
        # an object's memory and its new value are not a collective's volume; 'AG 参数 Ψ' is one
        ("ZeRO-2 省的是梯度 2Ψ → 0.25Ψ，通信不变。", "Q2", set()),
        ("ZeRO-1：RS 梯度 Ψ，再 AG 参数 2Ψ。", "Q2", {"comm-volume"}),
        # the exact ring volume (N−1)/N for an N the answer states
        ("N_d = 8 时严格算：AR = 1.75Ψ。", "Q2", set()),
        ("严格算：AR = 1.75Ψ。", "Q2", {"comm-volume"}),
        # total memory said to be negligible, or to go to any value, for any sequence length
        ("ZeRO-3 的每卡总显存应该可以压到想要的任意值。", "Q3", {"unbounded-scaling"}),
        ("N_d 很大时整张卡的显存占用基本可以忽略，序列多长都行。", "Q3", {"unbounded-scaling"}),
        ("N_d 很大时 16Ψ/N_d 的模型状态基本可以忽略。", "Q3", set()),
    ],
)
def test_tentative_claims_memory_values_exact_forms_and_limits(text, question, expected):
    assert ids(text, question) == expected


# --- what the lesson itself teaches (a review of lesson 5): comparisons and settings that change a step ---------


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # a clause that opens with '只有 X 的 …' compares the previous clause's party, however nested the 的 …
        (
            "“快两倍”：reduce-scatter 每卡收发 (N_d−1)/N_d·Ψ，只有 "
            "all-reduce 的 2(N_d−1)/N_d·Ψ 的一半，带宽受限时耗时约减半。",
            "Q2",
            set(),
        ),
        ("reduce-scatter 每卡收发 Ψ，只有 all-reduce 的一半。", "Q2", set()),
        ("reduce-scatter 每卡收发 (N_d−1)/N_d·Ψ，只有 all-gather 的 (N_d−1)/N_d·Ψ 的一半。", "Q2", {"comm-volume"}),
        ("reduce-scatter 每卡收发 Ψ，仅为 all-reduce 的两倍。", "Q2", {"comm-volume"}),
        # a negation inside a when-phrase ('不做梯度累积时') negates the condition, not the claim after it
        ("ZeRO-2 不做梯度累积时通信与 ZeRO-1 相同（RS + AG = 2Ψ），没有额外代价。", "Q2", set()),
        ("不开梯度累积的话，ZeRO-2 每步 2Ψ。", "Q2", set()),
        ("ZeRO-2 不做梯度累积时通信与 ZeRO-1 相同（RS + AG = 3Ψ）。", "Q2", {"comm-volume"}),
        ("不做梯度累积时 ZeRO-2 每步要 3Ψ。", "Q2", {"comm-volume"}),
        ("ZeRO-2 的通信不是 2Ψ。", "Q2", {"comm-volume"}),
        # '大于 X' makes X the compared-with party; with gradient accumulation ZeRO-2 moves more than ZeRO-1
        ("开启梯度累积时，ZeRO-2 每个 micro-batch 都要 reduce-scatter，通信量大于 ZeRO-1。", "Q2", set()),
        ("开启梯度累积时，ZeRO-2 每个 micro-batch 都要 reduce-scatter，通信量大于 ZeRO-1。", "Q3", set()),
        ("ZeRO-3 的通信量大于 ZeRO-1。", "Q3", set()),
        ("ZeRO-1 的通信量大于 ZeRO-3。", "Q3", {"comm-volume"}),
        ("不做梯度累积时，ZeRO-2 的通信量大于 ZeRO-1。", "Q2", {"comm-volume"}),
        # reshard_after_forward=False drops the backward all-gather: 2Ψ; the default (True) is ZeRO-3's 3Ψ
        ("FSDP 把 reshard_after_forward 设为 False 时，反向不再 all-gather，每步通信量是 2Ψ。", "Q2", set()),
        ("FSDP 把 reshard_after_forward 设为 False 时，反向不再 all-gather，每步通信量是 2Ψ。", "Q3", set()),
        ("reshard_after_forward=True 的 FSDP 每步 2Ψ。", "Q3", {"comm-volume"}),
        ("FSDP 把 reshard_after_forward 设为 False 时，每步通信量仍是 3Ψ。", "Q3", {"comm-volume"}),
        ("FSDP 每步通信量是 2Ψ。", "Q3", {"comm-volume"}),
        # 'mΨ' is a quantity per micro-batch: ZeRO-3 repeats its whole step, ZeRO-2 its reduce-scatter, ZeRO-1 nothing
        ("做 m 次梯度累积时，ZeRO-3 每个 micro-batch 都要重新 all-gather，通信量约 3mΨ。", "Q3", set()),
        ("梯度累积 m 步时 ZeRO-2 的通信是 mΨ + Ψ：每个 micro-batch 一次 RS，边界处一次 AG。", "Q2", set()),
        ("With gradient accumulation over m micro-batches, ZeRO-1 still communicates 2Ψ per step.", "Q2", set()),
        ("ZeRO-3 每步约 Ψ。", "Q3", {"comm-volume"}),
        ("做 m 次梯度累积时，ZeRO-3 每步通信量约 2mΨ。", "Q3", {"comm-volume"}),
        ("做 m 次梯度累积时，ZeRO-1 每步通信量约 2mΨ。", "Q2", {"comm-volume"}),
    ],
)
def test_what_the_lesson_teaches_about_comparisons_and_step_settings(text, question, expected):
    assert ids(text, question) == expected


def test_a_negated_volume_says_so_in_the_reason():
    (hint,) = find_veto_hints("ZeRO-2 的通信不是 2Ψ。", LESSON05, "Q2")
    assert hint.reason.endswith("此句说不是 2Ψ")
