"""The similarity engine on a planted lesson05 class: the copies are found, the honest answers are not flagged."""

from __future__ import annotations

import pytest

from course.similarity.collect import collect
from course.similarity.find_pairs import find_pairs
from tests.similarity.planted_class import PLANTED, write_class


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The planted class's ranked pairs."""
    project = write_class(tmp_path_factory.mktemp("planted"))
    return find_pairs(collect(project, "lesson05"))


def test_planted_copies_found_honest_answers_not_flagged(planted):
    """Recall and precision over the planted pairs are both at least 0.9."""
    found = {(p.a, p.b) for p in planted}
    recall = len(found & PLANTED) / len(PLANTED)
    precision = len(found & PLANTED) / max(1, len(found))
    print(f"recall {recall:.2f} precision {precision:.2f}; flagged {sorted(found)}")
    assert recall >= 0.9, f"missed {sorted(PLANTED - found)}"
    assert precision >= 0.9, f"flagged honest pairs {sorted(found - PLANTED)}"


def test_each_planted_pair_is_found_for_its_own_reason(planted):
    """The paraphrase by text, the renamed helper by code, the shared blank by its rarity."""
    kinds = {(p.a, p.b): {e.kind for e in p.evidence} for p in planted}
    assert "text" in kinds[("para-a", "para-b")]
    assert "text" in kinds[("q3-a", "q3-b")]
    assert kinds[("helper-a", "helper-b")] == {"code"}
    assert kinds[("blank-a", "blank-b")] == {"rare-answer"}
    assert {"text", "code"} <= kinds[("copy-a", "copy-b")]


def test_spans_cover_the_shared_text_not_the_lesson(planted):
    """The highlighted spans of a paraphrase lie inside both answers and leave the changed words out."""
    [pair] = [p for p in planted if (p.a, p.b) == ("para-a", "para-b")]
    [text] = [e for e in pair.evidence if e.kind == "text"]
    marked_b = "".join(text.text_b[s:e] for s, e in text.spans_b)
    assert "恰好持有" not in marked_b and "中间那一时刻" not in marked_b
    assert "只存自己的分片，通信路径不变" in marked_b
