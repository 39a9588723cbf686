"""Normalisation before comparing: the same code whatever the names and spacing; quoting the lesson removed."""

from __future__ import annotations

from course.similarity.grams import merge_spans, shared_grams
from course.similarity.normalise import code_tokens, fill_key
from course.similarity.rare_answers import rarity
from course.similarity.text_overlap import char_grams, gram_set


def test_a_fill_is_compared_as_python_not_as_spacing():
    """Spacing and redundant parentheses do not make a different answer; a different operator does."""
    assert fill_key("(a+b)/ dp") == fill_key("(a + b) / dp")
    assert fill_key("((a + b)) / dp") == fill_key("(a + b) / dp")
    assert fill_key("(a + b) // dp") != fill_key("(a + b) / dp")


def test_renamed_names_give_the_same_tokens_and_spans_point_into_the_source():
    """Variables renamed: the same canonical stream; each span covers its token in the source."""
    a, b = "total = x * 2\nprint(total)", "acc = y * 2\nprint(acc)"
    assert [t for t, _ in code_tokens(a)] == [t for t, _ in code_tokens(b)]
    assert [a[s:e] for _, (s, e) in code_tokens(a)][:3] == ["total", "=", "x"]
    assert [t for t, _ in code_tokens(a)][-3:] == ["(", "V", ")"] and "print" in [t for t, _ in code_tokens(a)]


def test_text_quoted_from_the_lesson_is_no_evidence():
    """Two answers that share only a sentence of the lesson share no gram once the lesson is boilerplate."""
    lesson = "冗余定义：ZeRO 消除的是跨 DP 副本重复存储的相同数据。"
    a = {"a": char_grams(lesson + "我认为激活在每卡都不同。"), "b": char_grams(lesson + "所以瓶颈留在激活上面。")}
    assert shared_grams(a, set(), max_share=2) and not shared_grams(a, set(char_grams(lesson)), max_share=2)
    page = "\n".join(f"{n}. {lesson} Ｚｅｒｏ-{n} ﬁ ① ZeRO_{n}" for n in range(2000))  # long, folded alike
    for text in (lesson, page, "", "短"):
        assert gram_set(text) == set(char_grams(text))  # the lesson's grams as a set, without their spans


def test_a_gram_many_students_share_is_common_not_evidence():
    """Above MAX_SHARE owners a gram links nobody; rarity falls as more students give the same answer."""
    grams = {s: char_grams("完全相同的一句话在这里") for s in "abc"}
    assert len(shared_grams(grams, set(), max_share=3)) == 3 and shared_grams(grams, set(), max_share=2) == []
    assert rarity(2, 100) == 1.0 and rarity(10, 100) < rarity(3, 100) < 1.0 and rarity(100, 100) == 0.0
    assert merge_spans([(5, 8), (0, 3), (2, 4)]) == ((0, 4), (5, 8))
