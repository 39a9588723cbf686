"""图 5-3 (lessons/lesson05/zero_memory.py): the stacked bars are the reference solution's numbers, drawn in a CJK
font, byte-for-byte reproducible."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib import font_manager
from matplotlib.text import Text

from course.errors import CourseError
from course.figures.render import find_cjk_font, render_png
from course.lesson.data_modules import load_data_module
from solutions.lesson05 import zero_memory_per_gpu

ROOT = Path(__file__).resolve().parents[2]
zero_memory = load_data_module(ROOT / "lessons" / "lesson05", "zero_memory", "lessons/lesson05/zero_memory.py")
GB, STAGES = zero_memory.GB, zero_memory.STAGES
draw_zero_memory, zero_memory_components = zero_memory.draw_zero_memory, zero_memory.zero_memory_components
zero_memory_figure = zero_memory.zero_memory_figure

PSI = 7_000_000_000


@pytest.mark.parametrize("dp", [2, 8, 64])
def test_components_add_up_to_the_solution_total_for_every_stage(dp):
    for entry in zero_memory_components(zero_memory_per_gpu, PSI, dp):
        assert entry.total == zero_memory_per_gpu(PSI, dp, entry.stage, k=12)
        assert entry.params + entry.grads + entry.optimizer == pytest.approx(entry.total, rel=1e-12)


def test_each_stage_shards_what_the_lesson_says():
    dp = 8
    z0, z1, z2, z3 = zero_memory_components(zero_memory_per_gpu, PSI, dp)
    assert (z0.params, z0.grads, z0.optimizer) == pytest.approx((2 * PSI, 2 * PSI, 12 * PSI))
    assert (z1.params, z1.grads, z1.optimizer) == pytest.approx((z0.params, z0.grads, z0.optimizer / dp))
    assert (z2.params, z2.grads, z2.optimizer) == pytest.approx((z0.params, z0.grads / dp, z0.optimizer / dp))
    assert (z3.params, z3.grads, z3.optimizer) == pytest.approx((z0.params / dp, z0.grads / dp, z0.optimizer / dp))


def test_dp_1_still_splits_and_all_stages_are_equal():
    stages = zero_memory_components(zero_memory_per_gpu, PSI, 1)
    assert {round(entry.params) for entry in stages} == {2 * PSI}
    assert len({entry.total for entry in stages}) == 1


def test_a_solution_whose_parts_do_not_add_up_is_refused_with_its_location():
    def zero3_keeps_full_gradients(num_params, dp, stage, k=12):
        shards = {0: (1, 1, 1), 1: (1, 1, dp), 2: (1, dp, dp), 3: (dp, 1, dp)}[stage]
        return sum(size / share for size, share in zip((2 * num_params, 2 * num_params, k * num_params), shards))

    with pytest.raises(CourseError) as error:
        zero_memory_components(zero3_keeps_full_gradients, PSI, 8)
    assert "zero_memory_per_gpu(stage=0" in str(error.value)
    assert error.value.where.path == Path(__file__)
    assert error.value.where.line == zero3_keeps_full_gradients.__code__.co_firstlineno


def _bar_totals(fig) -> list[float]:
    """Top of each stacked bar, read back from the drawn rectangles."""
    (ax,) = fig.axes
    tops = [0.0] * len(STAGES)
    for container in ax.containers:
        for index, rect in enumerate(container.patches):
            tops[index] = max(tops[index], rect.get_y() + rect.get_height())
    return tops


def test_bar_heights_and_total_labels_are_the_solution_totals():
    dp = 8
    stages = zero_memory_components(zero_memory_per_gpu, PSI, dp)
    fig = zero_memory_figure(stages, num_params=PSI, dp=dp, font=find_cjk_font())
    expected = [zero_memory_per_gpu(PSI, dp, stage) / GB for stage in STAGES]
    assert _bar_totals(fig) == pytest.approx(expected)
    assert len(fig.axes[0].containers) == 3  # parameters, gradients, optimizer states
    labels = {text.get_text() for text in fig.axes[0].texts}
    assert {f"{value:.4g} GB" for value in expected} <= labels


def test_every_label_is_set_in_the_cjk_font_and_renders_without_missing_glyphs():
    font = find_cjk_font()
    fig = zero_memory_figure(zero_memory_components(zero_memory_per_gpu, PSI, 8), num_params=PSI, dp=8, font=font)
    render_png(fig)  # raises CourseError on any "Glyph ... missing from font" warning
    texts = [t for t in fig.findobj(Text) if t.get_text()]
    assert any("显存" in t.get_text() for t in texts)
    for text in texts:
        if any(ord(ch) > 0x2E80 for ch in text.get_text()):
            used = font_manager.findfont(text.get_fontproperties(), fallback_to_default=False)
            assert font_manager.get_font(used).family_name == font, text.get_text()


def test_same_inputs_give_the_same_png_bytes(tmp_path):
    first = draw_zero_memory(tmp_path / "a" / "zero.png", zero_memory_per_gpu).read_bytes()
    second = draw_zero_memory(tmp_path / "b" / "zero.png", zero_memory_per_gpu).read_bytes()
    assert first.startswith(b"\x89PNG\r\n\x1a\n")
    assert first == second
    assert b"Matplotlib version" not in first
    assert list(tmp_path.rglob("*.tmp")) == []


def test_other_inputs_give_another_png(tmp_path):
    eight = draw_zero_memory(tmp_path / "dp8.png", zero_memory_per_gpu).read_bytes()
    sixty_four = draw_zero_memory(tmp_path / "dp64.png", zero_memory_per_gpu, dp=64).read_bytes()
    assert eight != sixty_four
