"""Lesson 5's passages on FSDP in practice (lessons/lesson05/fsdp_practice.py): the formulas say what the text
derives, and every number the built pages print there is the formulas' value, on both variants."""

from __future__ import annotations

import html
import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from course.lesson.data_modules import load_data_module

ROOT = Path(__file__).resolve().parents[2]
QMD = ROOT / "lessons" / "lesson05.qmd"
fp = load_data_module(ROOT / "lessons" / "lesson05", "fsdp_practice", "lessons/lesson05/fsdp_practice.py")

PSI_7B = 7 * 10**9
LLAMA2_70B_PSI = 68_976_648_192  # Llama-2-70B's published parameter count (80 layers, h 8192, GQA with 8 KV heads)
HEADINGS = (
    "激活检查点与 FSDP 一起用",
    "PyTorch 中的实现：FSDP2 的 `fully_shard`",
    "跨节点的标准对策：HSDP 与 ZeRO++",
    "只有一张 24 GiB 的卡：把模型状态卸载到 CPU",
)


def test_llama2_70b_shapes_give_its_published_size_and_the_lessons_layer_size():
    assert fp.LLAMA2_70B.params() == LLAMA2_70B_PSI
    assert round(fp.LLAMA2_70B.layer_params() / 1e9, 3) == 0.856  # the unit §6 and the 70B example use


def test_the_unit_bound_is_8_psi_u_in_bf16_and_12_psi_u_with_an_fp32_reduce_dtype():
    assert fp.unit_transient_bytes(1000) == 8 * 1000
    assert fp.unit_transient_bytes(1000, reduce_bytes=4) == 12 * 1000


def test_an_fp32_reduce_dtype_costs_a_third_more_traffic_than_bf16():
    bf16, fp32 = fp.zero3_traffic_bytes(PSI_7B, 64), fp.zero3_traffic_bytes(PSI_7B, 64, reduce_bytes=4)
    assert bf16 == 6 * Fraction(63, 64) * PSI_7B
    assert fp32 / bf16 == Fraction(4, 3)


def test_hsdp_is_zero3_inside_the_group_and_an_all_reduce_of_the_shard_across_groups():
    hsdp = fp.Hsdp(psi=PSI_7B, shard=8, replicas=8)
    assert hsdp.memory() == Fraction(16 * PSI_7B, 8)
    assert hsdp.intra_elements() == 3 * Fraction(7, 8) * PSI_7B
    assert hsdp.inter_elements() == 2 * Fraction(7, 8) * Fraction(PSI_7B, 8)
    assert hsdp.flat_node_egress_elements() == 3 * Fraction(63, 64) * PSI_7B
    assert fp.Hsdp(psi=PSI_7B, shard=8, replicas=1).inter_elements() == 0  # one node: nothing crosses nodes
    whole = fp.Hsdp(psi=PSI_7B, shard=64, replicas=1)  # one group spanning every rank is plain FSDP
    assert whole.memory() == Fraction(16 * PSI_7B, 64)


def test_zeropp_cuts_cross_node_traffic_to_a_quarter_and_hpz_costs_a_16_bit_copy_per_node():
    assert fp.zeropp_cross_node_fraction() == Fraction(1, 4)
    assert fp.hpz_extra_bytes(PSI_7B, 8) == Fraction(2 * PSI_7B, 8)


@pytest.mark.parametrize("kind,to_gpu,to_host", [(fp.ZERO_OFFLOAD_16BIT, 4, 2), (fp.FSDP2_FP32, 8, 4)])
def test_offload_needs_16_psi_of_host_memory_and_streams_the_parameters_twice_per_step(kind, to_gpu, to_host):
    run = fp.offload(LLAMA2_70B_PSI, kind)
    assert run.host_bytes() == 16 * LLAMA2_70B_PSI
    assert (run.to_gpu_bytes(), run.to_host_bytes()) == (to_gpu * LLAMA2_70B_PSI, to_host * LLAMA2_70B_PSI)
    assert run.seconds_on_pcie() == Fraction(to_gpu * LLAMA2_70B_PSI) / fp.PCIE4_X16


def test_an_unknown_offload_accounting_is_refused_by_name():
    with pytest.raises(ValueError, match="'nvme'"):
        fp.offload(LLAMA2_70B_PSI, "nvme")


def test_pcie_4_x16_is_16_gt_per_lane_with_128b_130b_encoding():
    assert float(fp.PCIE4_X16) == pytest.approx(31.5e9, rel=1e-3)


def test_the_playbooks_dp_figure_labels_are_the_drops_the_page_rounds():
    """§6 cites the drops the Playbook's DP scaling figure labels on each doubling, from 8 to 256 GPUs."""
    assert [n for n, _ in fp.PLAYBOOK_DP_DOUBLING_DROPS] == [16, 32, 64, 128, 256]
    drops = [d for _, d in fp.PLAYBOOK_DP_DOUBLING_DROPS]
    assert [float(100 * d) for d in drops] == [6.3, 6.0, 12.0, 15.0, 40.6]
    assert drops[2:] == sorted(drops[2:]) and drops[-1] == max(drops)
    assert [fp.percent(d) for d in drops] == ["6%", "6%", "12%", "15%", "41%"]


def test_numbers_are_rounded_half_up_not_to_even():
    """551.25 GB prints as 551.3, as a reader rounds it; Python's float formatting would print 551.2."""
    assert f"{551.25:.1f}" == "551.2"
    assert fp.gb(551_250_000_000) == "551.3" and fp.fixed(Fraction(105, 4), 1) == "26.3"
    assert (
        fp.fixed(Fraction(7, 4), 2) == "1.75"
        and fp.fixed(Fraction(1, 2), 0) == "1"
        and fp.fixed(Fraction(1, 25), 2) == "0.04"
    )
    assert fp.percent(Fraction(1, 3)) == "33%"


def test_full_checkpointing_keeps_one_bf16_input_per_layer_and_costs_one_more_forward():
    assert fp.checkpoint_bytes(fp.LLAMA2_70B, batch=1, seq=4096) == 80 * 4096 * 8192 * 2
    assert fp.RECOMPUTE_FLOPS_FACTOR == Fraction(8, 6)


def _section(text: str, heading: str) -> str:
    """The page text from HEADING to the next heading of the same or a higher level."""
    start = text.index(heading.replace("`", ""))
    ends = [
        text.find(marker, start + 1)
        for marker in ("\n7. ZeRO-3", "\n6. 工程选型", "\n扩展（选读）", "\n跨节点的标准对策")
    ]
    return text[start : min(end for end in ends if end > 0)]


def _page_text(built_site: Path, variant: str) -> str:
    """The lesson page's text with tags dropped, after the table of contents."""
    page = (built_site / variant / "lesson05.html").read_text("utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return text[text.index("本课目标\n完成后") :]


def _expected_numbers() -> dict[str, list[str]]:
    """Per section, the numbers it must print, recomputed here from first principles (bytes → GB = 10^9)."""
    psi, unit, ckpt = LLAMA2_70B_PSI, 855_654_400, 80 * 4096 * 8192 * 2
    pcie = 16e9 * 16 * 128 / 130 / 8
    return {
        HEADINGS[0]: ["4/3", f"{ckpt / 1e9:.2f} GB", f"{ckpt / 2**30:.2f} GiB"],
        HEADINGS[1]: ["4/3", f"{8 * unit / 1e9:.2f} GB", f"{12 * unit / 1e9:.2f} GB", f"{unit / 1e9:.3f}"],
        HEADINGS[2]: [
            f"{16 * PSI_7B / 8 / 1e9:.2f} GB",
            f"{16 * PSI_7B / 64 / 1e9:.2f} GB",
            f"{3 * 7 / 8 * PSI_7B / 1e9:.2f}G",
            f"{2 * 7 / 8 * PSI_7B / 8 / 1e9:.2f}G",
            f"{2 * 7 / 8 * PSI_7B / 1e9:.2f}G",
            f"{3 * 63 / 64 * PSI_7B / 1e9:.2f}G",
            f"约 {3 * 63 / 64 / (2 * 7 / 8):.1f} 倍",  # flat FSDP's node egress over HSDP's
            "0.75M",
            "1/4",
            f"{2 * PSI_7B / 8 / 1e9:.2f} GB",
        ],
        HEADINGS[3]: [
            f"{psi:,}",
            f"{16 * psi / 1e9:.1f} GB",
            f"{18 * psi / 1e9:.1f} GB",  # 16-bit parameters, FP32 gradients, FP32 master and Adam state
            f"{8 * unit / 1e9:.2f} GB",
            f"{8 * unit / 2**30:.2f} GiB",
            f"{ckpt / 1e9:.2f} GB",
            f"{4 * psi / 1e9:.1f} GB",
            f"{2 * psi / 1e9:.1f} GB",
            f"{8 * psi / 1e9:.1f} GB",
            f"{pcie / 1e9:.1f} GB/s",
            f"{4 * psi / pcie:.1f} s",
            f"{8 * psi / pcie:.1f} s",
        ],
    }


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_section_6_prints_the_playbooks_benchmark_from_its_data(built_site, variant):
    text = _page_text(built_site, variant)
    section = text[text.index("6. 工程选型准则") : text.index("PyTorch 中的实现：FSDP2")]
    labels = (6.3, 6.0, 12.0, 15.0, 40.6)  # the figure's own labels; none falls on a half
    drops = [f"{round(x)}%" for x in labels]
    assert f"依次约为 {'、'.join(drops)}：前两次约 {drops[0]}，之后逐次加大，到 256 卡骤降约 {drops[-1]}" in section
    assert "越来越快" not in section and "此前不降" not in section
    assert "在讲 ZeRO-3 预取重叠时给出一条未加推导的经验值：DP 不宜超过 512" in section and "不是通用界限" in section


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_each_section_prints_the_formulas_values_on_both_variants(built_site, variant):
    text = _page_text(built_site, variant)
    for heading, numbers in _expected_numbers().items():
        section = _section(text, heading)
        assert "静态审查" in section.split("\n", 3)[1], heading  # marked right under its heading
        assert [n for n in numbers if n not in section] == [], heading


def test_these_sections_narrate_no_correction():
    """Their numbers are printed by cells (tests/lesson_content/test_lesson05_numbers.py checks the whole lesson's
    prose); nor do they tell what an earlier text said."""
    source = QMD.read_text("utf-8")
    for heading in HEADINGS:
        start = source.index(heading)
        section = source[start : start + re.search(r"\n#{2,4} ", source[start + 1 :]).start() + 1]
        assert not re.search("勘误|原稿|上一版", section), heading


def test_the_pages_rounding_is_half_up_as_by_hand_and_large_counts_in_tex():
    assert (fp.fixed(Fraction(105, 4), 1), fp.fixed(Fraction(7, 4), 2), fp.fixed(112, 1)) == ("26.3", "1.75", "112.0")
    assert f"{26.25:.1f}" == "26.2"  # what float formatting gives, and why the page does not use it
    assert fp.fixed(Fraction(700, 39), 0) == "18"
    assert fp.sci(2 * 32 * 4096 * 8192) == "2.1\\times 10^{9}" and fp.sci(3 * 70 * 10**9, 2) == "2.10\\times 10^{11}"


@pytest.mark.parametrize("stage,elements,bf16,fp32", [(0, 2, 4, 8), (1, 2, 4, 6), (2, 2, 4, 6), (3, 3, 6, 8)])
def test_the_lessons_2_psi_and_3_psi_in_elements_and_bytes_by_reduce_dtype(stage, elements, bf16, fp32):
    assert fp.approx_elements(PSI_7B, stage) == elements * PSI_7B
    assert fp.approx_traffic_bytes(PSI_7B, stage) == bf16 * PSI_7B
    assert fp.approx_traffic_bytes(PSI_7B, stage, reduce_bytes=4) == fp32 * PSI_7B


def test_each_addition_is_listed_among_the_departures_with_its_heading():
    departures = yaml.safe_load((ROOT / "lessons" / "lesson05" / "departures.yml").read_text("utf-8"))
    headings = set(re.findall(r"^#{2,4} (.+)$", QMD.read_text("utf-8"), flags=re.M))
    listed = {entry["where"] for entry in departures["departures"]}
    assert set(HEADINGS) | {"官方主参考"} <= listed
    assert {where for where in listed - headings if not (ROOT / where).is_file()} == set()  # else a file it names
    assert all(set(entry) == {"where", "original", "now", "why"} for entry in departures["departures"])
