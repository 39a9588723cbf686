"""Lesson 5 says only what it shows and fixes its text in place: the lab section types no measured number, the
claims the original made and the lesson withdrew appear nowhere in it or its rubric, the FSDP unit bound and the
70B-on-a-24-GiB-card example are the formulas module's, and departures.yml names only places that exist."""

from __future__ import annotations

import importlib
import re
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from course.lab.formulas import memory_bytes

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "lessons" / "lesson05.qmd").read_text("utf-8")
RUBRIC = (ROOT / "autograder" / "rubrics" / "lesson05.yml").read_text("utf-8")
DEPARTURES = ROOT / "lessons" / "lesson05" / "departures.yml"

# Claims the original (the seed) made that the lesson no longer makes; departures.yml quotes them, nothing else may.
WITHDRAWN = (
    "512 卡扩展性红线",
    "绝对不能",
    "很少叠加",
    "很少同时使用",
    "FSDP 就是 ZeRO-3 的 PyTorch 实现",
    "FSDP = ZeRO-3",
    "快两倍",
    "状态：未开始",
    "进程 RSS 不可用",
    "上一步算完",
    "上一层（Layer",
    "真正跑一遍",
    "超过约 512",
    "颠覆性",
    "彻底消除冗余",
    "完全没有任何下降",
    "惊人的结论",
    "结合第 4 课 Q3",
    "6\\Psi_u",
    "两三个进程",
    "128–256 卡",
)
# One spelling of each collective in the lesson's prose, diagrams and comments: all-reduce, reduce-scatter, all-gather.
OTHER_SPELLINGS = re.compile(r"All-?Reduce|All-?Gather|Reduce-?Scatter|Allreduce|Allgather|Reducescatter|AllReduce")


@pytest.fixture(scope="module")
def zero_memory():
    """The lesson's formulas module, lessons/lesson05/zero_memory.py, imported the way the lesson's cells do."""
    sys.path.insert(0, str(ROOT / "lessons"))
    try:
        yield importlib.import_module("lesson05.zero_memory")
    finally:
        sys.path.remove(str(ROOT / "lessons"))


def _prose(markdown: str) -> str:
    """Markdown without its fenced code (cells and listings)."""
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def _section(heading: str) -> str:
    """The text under HEADING (a line of the lesson) up to the next heading of the same or a higher level."""
    level = len(heading.split(" ", 1)[0])
    lines, fenced = [], False
    for line in TEXT.split("\n" + heading + "\n", 1)[1].splitlines():
        fenced ^= line.startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", line):
            break
        lines.append(line)
    return "\n".join(lines)


def test_the_lab_section_types_no_measured_number():
    """Ratios, multiples and FSDP2's between-steps state come from the lab's report (lesson_view), not from the
    author."""
    section = TEXT.split("## 扩展（选读）：在 torch.distributed 上运行", 1)[1].split("\n## 代码填空题", 1)[0]
    prose = _prose(section)
    assert "display(fsdp_refinement(MEASURED))" in section  # the refinement note is a cell reading the report
    assert re.findall(r"\d+\.\d+", prose) == []
    assert re.findall(r"\d\s*倍", prose) == []
    assert not re.search(r"步与步之间[^。]*?\d+\s*(\\Psi|Ψ)", prose)


def test_the_lab_section_calls_only_memory_measured():
    """Traffic is computed from the recorded collectives: the caption and the text say 计算 for it, 实测 for memory."""
    caption = re.search(r'#\| fig-cap: "(图 5-5[^"]*)"', TEXT).group(1)
    assert "内存（实测）" in caption and "通信（按记录的集合通信计算）" in caption  # gloo ranks: host memory, not 显存
    assert not re.search(r"实测[^，。；]{0,6}通信|通信[^，。；]{0,6}实测", _prose(TEXT))


def test_withdrawn_claims_appear_nowhere_in_the_lesson_or_its_rubric():
    assert [claim for claim in WITHDRAWN if claim in TEXT] == []
    assert [claim for claim in WITHDRAWN if claim in RUBRIC] == []
    assert [word for word in ("勘误", "原稿", "上一版", "补写") if word in TEXT + RUBRIC] == []


def test_collectives_are_spelled_one_way():
    assert OTHER_SPELLINGS.findall(TEXT) == []
    assert all(name in TEXT for name in ("all-reduce", "reduce-scatter", "all-gather"))


def test_misconceptions_are_taught_in_boxes_that_say_why():
    boxes = re.findall(r'::: \{\.callout-warning title="常见误区"\}\n(.*?)\n:::', TEXT, flags=re.S)
    assert len(boxes) >= 2
    assert all(re.match(r"“[^”]+”", box) and ("不对" in box or "只对" in box) for box in boxes)


def test_the_sections_not_run_by_the_lab_say_static_review_under_their_heading():
    """The lesson's own rule: what was not run is marked 静态审查 (its numbers 计算) in a label under the heading."""
    for heading in ("### 4. ", "### 5. ", "### 6. ", "### 7. "):
        section = TEXT.split(heading, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        first_paragraphs = section.split("\n- ", 1)[0].split("\n1. ", 1)[0]
        labels = [line for line in first_paragraphs.splitlines() if line.startswith("*") and line.endswith("*")]
        assert labels and "静态审查" in labels[0], heading


def test_the_70b_example_says_it_is_computed_not_run():
    """The example is arithmetic on the formulas; nothing ran on a card, and the line under its heading says so."""
    section = _section("### 70B 模型能在 24 GiB 的卡上训练吗？")
    assert section.lstrip().startswith("*计算（未运行）：")


def test_every_section_the_text_points_to_exists():
    """A “…”一节 reference names a heading of the lesson (its full text or the start of it), so a reader can find it."""
    headings = _headings()
    named = re.findall(r"“([^”]+)”一节", TEXT)
    assert named and [name for name in named if not any(h.startswith(name) for h in headings)] == []


def test_the_fsdp_unit_bound_is_the_formulas_modules(zero_memory):
    """§6: two gathered units of BF16 parameters and two of gradients, 8Ψ_u; 12Ψ_u with gradients reduced in FP32."""
    section = _section("### 6. 工程选型准则：FSDP 与扩展边界")
    bf16 = re.search(r"\\underbrace\{2 \\times 2\\Psi_u\}.*?= (\d+)\\Psi_u \\text\{ 字节\}", section)
    fp32 = re.search(r"2 \\times 2\\Psi_u \+ 2 \\times 4\\Psi_u = (\d+)\\Psi_u", section)
    assert int(bf16.group(1)) == zero_memory.unit_transient_bytes(1) == 8
    assert int(fp32.group(1)) == zero_memory.unit_transient_bytes(1, reduce_bytes=4) == 12


def test_llama2_70b_layer_is_counted_from_its_shapes(zero_memory):
    shape = zero_memory.LLAMA2_70B
    h, kv = shape.hidden, shape.kv_heads * shape.hidden // shape.heads
    assert shape.layer_params() == 2 * h * h + 2 * h * kv + 3 * h * shape.ffn + 2 * h == 855_654_400


def test_the_70b_example_is_computed_and_says_it_does_not_fit(zero_memory):
    """Every number of the example comes from the formulas: static state as course.lab.formulas has it, the unit bound,
    the card in GiB; the text the cell prints shows exactly those numbers and the verdict they give."""
    section = _section("### 70B 模型能在 24 GiB 的卡上训练吗？")
    assert "print(card_example_markdown())" in section and re.findall(r"\d+\.\d+", _prose(section)) == []
    ex = zero_memory.card_example()
    assert Fraction(ex.static) == memory_bytes(70 * 10**9, 64, 3)
    assert ex.unit_peak == zero_memory.unit_transient_bytes(zero_memory.LLAMA2_70B.layer_params())
    assert ex.card == 24 * 2**30 and ex.left == ex.card - ex.static - ex.unit_peak
    assert ex.checkpoints > ex.left  # so it does not fit: the page must say so
    shown = zero_memory.card_example_markdown(ex)
    for nbytes in (ex.static, ex.unit_peak, ex.total, ex.card, ex.left, ex.checkpoints):
        assert f"{nbytes / 1e9:.2f} GB（{nbytes / 2**30:.2f} GiB）" in shown
    assert "**结论：放不下。**" in shown and "放得下。" not in shown
    # more cards shrink only the static state: the page names the first doubling of N_d that fits on paper
    more = zero_memory.fewest_cards_doubling(ex)
    fits = lambda dp: 16 * 70e9 / dp + ex.unit_peak + ex.checkpoints <= ex.card  # noqa: E731
    assert more.dp % ex.dp == 0 and fits(more.dp) and not fits(more.dp // 2)
    left = ex.card - 16 * 70e9 / more.dp - ex.unit_peak - ex.checkpoints
    assert f"$N_d = {more.dp}$ 时" in shown and f"{left / 1e9:.2f} GB（{left / 2**30:.2f} GiB）" in shown


def test_the_built_page_shows_the_70b_example(built_site, zero_memory):
    """The student and answer pages carry the cell's output, with no hand edits in between."""
    ex = zero_memory.card_example()
    for variant in ("student", "answer"):
        page = (built_site / variant / "lesson05.html").read_text("utf-8")
        for nbytes in (ex.static, ex.unit_peak, ex.total, ex.left, ex.checkpoints):
            assert f"{nbytes / 1e9:.2f} GB（{nbytes / 2**30:.2f} GiB）" in page, variant
        assert "结论：放不下。" in page


def _headings() -> list[str]:
    """The lesson's h2–h4 headings as written after the #'s, in order."""
    prose = _prose(TEXT)
    return [m.group(1).strip() for m in re.finditer(r"^#{2,4} (.+)$", prose, flags=re.M)]


def test_departures_name_only_places_that_exist_in_lesson_order():
    doc = yaml.safe_load(DEPARTURES.read_text("utf-8"))
    assert doc["version"] == 1 and doc["departures"]
    headings = _headings()
    positions = []
    for entry in doc["departures"]:
        assert set(entry) == {"where", "original", "now", "why"}, entry
        assert all(isinstance(v, str) and v.strip() for v in entry.values()), entry
        where = entry["where"]
        if where in headings:
            positions.append(headings.index(where))
        else:
            assert (ROOT / where).is_file(), (
                f"departures.yml: {where!r} is neither a heading of lesson05.qmd nor a file"
            )
    assert positions == sorted(positions)


def test_departures_cover_what_the_lesson_fixed():
    """Each place where the original said something the lesson withdrew has its entry."""
    text = DEPARTURES.read_text("utf-8")
    for claim in (
        "512 卡扩展性红线",
        "绝对不能",
        "快两倍",
        "颠覆性的见解",
        "完全没有任何下降",
        "惊人的结论",
        "状态：未开始",
        "1.75 GB，使得在 24GB",
        "结合第 4 课 Q3",
    ):
        assert claim in text, claim
