"""Lesson 5 says only what it shows: the 实测 section types no measured number, and the absolute claims the review
found (issue 37) stand only where a 勘误 quotes the original."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "lessons" / "lesson05.qmd").read_text("utf-8")
RUBRIC = (ROOT / "autograder" / "rubrics" / "lesson05.yml").read_text("utf-8")

# Claims the original (the seed) or an earlier version made that the lesson no longer makes; a 勘误 may quote them.
WITHDRAWN = ("512 卡扩展性红线", "绝对不能", "很少叠加", "很少同时使用", "FSDP 就是 ZeRO-3 的 PyTorch 实现", "FSDP = ZeRO-3",
             "快两倍", "状态：未开始", "进程 RSS 不可用", "上一步算完", "上一层（Layer", "真正跑一遍", "超过约 512")


def _without_corrections(text: str) -> str:
    """The lesson less its 勘误 callouts and italic 勘误 notes (the places that quote the original)."""
    text = re.sub(r'::: \{\.callout-note title="勘误"\}\n.*?\n:::', "", text, flags=re.S)
    return re.sub(r"\*勘误：[^\n]*\*", "", text)


def _prose(markdown: str) -> str:
    """Markdown without its fenced code (cells and listings)."""
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def test_the_measured_section_types_no_measured_number():
    """Ratios, multiples and FSDP2's between-steps state come from the lab's report (lesson_view), not from the author."""
    section = TEXT.split("## 扩展（选读）：在 torch.distributed 上实测", 1)[1].split("\n## 代码填空题", 1)[0]
    prose = _prose(section)
    assert "display(fsdp_refinement(MEASURED))" in section  # the refinement note is a cell reading the report
    assert re.findall(r"\d+\.\d+", prose) == []
    assert re.findall(r"\d\s*倍", prose) == []
    assert not re.search(r"步与步之间[^。]*?\d+\s*(\\Psi|Ψ)", prose)


def test_withdrawn_claims_appear_only_where_a_correction_quotes_them():
    kept = _without_corrections(TEXT)
    assert [claim for claim in WITHDRAWN if claim in kept] == []
    assert [claim for claim in WITHDRAWN if claim in RUBRIC] == []
    assert "勘误" in TEXT and kept != TEXT


def test_the_sections_not_run_by_the_lab_say_static_review_under_their_heading():
    """The lesson's own rule: what was not actually run may only be marked 静态审查."""
    for heading in ("### 4. ", "### 6. ", "### 7. "):
        section = TEXT.split(heading, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        first_paragraphs = _without_corrections(section).split("\n- ", 1)[0].split("\n1. ", 1)[0]
        assert "*静态审查：" in first_paragraphs, heading
