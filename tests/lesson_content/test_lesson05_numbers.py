"""Every number lesson 5 derives is printed by a cell from its formulas, never typed: the qmd's prose holds no
decimal, GB figure or percentage but the givens, and the built pages show the values recomputed here from
course.lab.formulas, on both variants."""

from __future__ import annotations

import html
import re
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from course.lab.formulas import comm_elements, memory_bytes

ROOT = Path(__file__).resolve().parents[2]
QMD = ROOT / "lessons" / "lesson05.qmd"

# A result a hand could type: a decimal, a size in GB / GiB (also as TeX "\text{ GB}" or "\text{G 数值}"), a percentage.
TYPED_RESULT = re.compile(r"\d+\.\d+|\d+\s*(?:\\text\{\s*)?G(?:i)?B|\d+\s*\\text\{G|\d+\s*\\?%")
# Givens, not results: software versions, arXiv numbers and paper sections, the card the text is about, image widths.
GIVENS = re.compile(
    r"(?:PyTorch|torch|NCCL 自|NCCL) [\d.、]+|arXiv:\d+\.\d+|arxiv\.org/abs/\d+\.\d+|第 \d+\.\d+ 节|24 GiB|"
    r"width=\"\d+%\""
)
PSI_7B, GB = 7 * 10**9, 10**9


def typed_results(markdown: str) -> list[tuple[int, str]]:
    """(line, text) of each typed result in MARKDOWN's prose: fenced code (cells, listings) and givens left out."""
    found, fenced = [], False
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            found += [(number, hit) for hit in TYPED_RESULT.findall(GIVENS.sub("", line))]
    return found


def test_the_lessons_prose_types_no_result():
    assert typed_results(QMD.read_text("utf-8")) == []


@pytest.mark.parametrize(
    "typed",
    [
        "显存从 $16\\Psi$ 降至约 $4.19\\Psi$",
        "需要 $1120\\text{ GB}$",
        "多 50%",
        "| $38.5\\text{ GB}$ |",
        "约为 $7/39 \\approx 18\\%$",
        "BF16 约 4.3 GB",
    ],
)
def test_a_typed_result_is_found_and_givens_are_not(typed):
    assert typed_results(f"正文 {typed}。\n") != []
    assert typed_results(f"```{{python}}\nprint('{typed}')\n```\n") == []
    assert (
        typed_results(
            'NCCL 自 2.23 起，torch 2.13、PyTorch 2.6、arXiv:2407.21783 第 3.3 节，24 GiB 的卡 {width="85%"}\n'
        )
        == []
    )


def _half_up(x: Fraction, digits: int) -> str:
    """X rounded half up to DIGITS decimals, as the lesson rounds by hand."""
    return str((Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP))


def _table_gb(nd: int, stage: int) -> str:
    """The 7B table's GB: one decimal, two below 10 GB."""
    value = memory_bytes(PSI_7B, nd, stage) / GB
    return _half_up(value, 1 if value >= 10 else 2)


def _expected() -> list[str]:
    """What the pages must print, recomputed from course.lab.formulas (Ψ = 1 gives multiples of Ψ)."""
    z1, z2 = memory_bytes(1, 64, 1), memory_bytes(1, 64, 2)
    more = _half_up(comm_elements(1, 64, 3) / comm_elements(1, 64, 0) * 100 - 100, 0)
    boundary = 2 * 32 * 1 * 4096 * 8192  # pipeline elements per step: 2·m·b·s·h
    zero3_70b = 3 * 70 * 10**9
    rows = [
        f"N_d = {nd} ({name}) " + " ".join(f"{_table_gb(nd, stage)}\\text{{ GB}}" for stage in range(4))
        for nd, name in ((1, "单卡基准"), (8, "单机 8 卡"), (64, "8 节点集群"))
    ]
    return rows + [
        f"需要 {int(memory_bytes(70 * 10**9, 1, 0) / GB)}\\text{{ GB}}",
        f"降至 {_half_up(Fraction(12, 64), 4)}\\Psi",
        f"降至约 {_half_up(z1, 2)}\\Psi",
        f"节省约 {_half_up(100 * (1 - z1 / 16), 0)}% 显存",
        f"压缩至约 {_half_up(z2, 2)}\\Psi",
        f"ZeRO-3 多 {more}%",
        f"增加了 {more}%（从",
        f"comm 列在每一行都打印 {_half_up(Fraction(3 * PSI_7B, GB), 1)}：",
        f"代码的 {_half_up(Fraction(3 * PSI_7B, GB), 1)} 应理解为",
        f"N_d = 8 为 {_half_up(comm_elements(PSI_7B, 8, 3) / GB, 1)} G",
        f"N_d = 64 为 {_half_up(comm_elements(PSI_7B, 64, 3) / GB, 1)} G 个数值",
        "= 14 + 14 + 10.5 = 38.5\\text{ GB}",
        f"= 14 + 12.25 = 26.25 \\approx {_table_gb(8, 2)}\\text{{ GB}}",
        f"{{8}} = {_half_up(memory_bytes(PSI_7B, 8, 3) / GB, 1)}\\text{{ GB}}",
        f"{{64}} = {float(memory_bytes(PSI_7B, 64, 3) / GB)}\\text{{ GB}}",
        f"2\\Psi = {2 * PSI_7B // GB}\\text{{G 数值}}",
        f"BF16 下为 {2 * 2 * PSI_7B // GB}\\text{{ GB}} 通信",
        f"BF16 下为 {2 * 3 * PSI_7B // GB}\\text{{ GB}} 通信",
        f"ZeRO-1/2 为 {(2 + 4) * PSI_7B // GB}\\text{{ GB}}",
        f"ZeRO-3 为 {(2 + 2 + 4) * PSI_7B // GB}\\text{{ GB}}",
        f"约 {boundary / 1e9:.1f}\\times 10^{{9}} 个数值（BF16 约 {2 * boundary / 1e9:.1f} GB）",
        f"约为 {zero3_70b / 1e11:.1f}\\times 10^{{11}} 个数值",
        f"约是它的 {round(zero3_70b / boundary, -1):.0f} 倍",
        f"7/39 \\approx {_half_up(Fraction(700, 39), 0)}\\%",
        f"ZeRO-2 是 {26.25:.1f}、",
        f"ZeRO-3 是 {1.75:.1f}，而正文表格写 {_table_gb(8, 2)} 与 {_table_gb(64, 3)}",
    ]


TYPESET = re.compile(
    r'<span class="math (?:inline|display)"><mjx-container.*?'
    r'<annotation encoding="application/x-tex">(.*?)</annotation>.*?</mjx-container></span>',
    re.S,
)


def _page_text(built_site: Path, variant: str) -> str:
    """The lesson page's text, each formula as its TeX (the annotation of its MathML) between spaces: tags dropped,
    runs of whitespace one space."""
    page = (built_site / variant / "lesson05.html").read_text("utf-8")
    page = TYPESET.sub(lambda m: f" {m.group(1)} ", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page)))


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_the_built_pages_show_the_formulas_values(built_site, variant):
    text = _page_text(built_site, variant)
    assert [want for want in _expected() if want not in text] == []
