"""What lesson 5's memory and traffic calculator (lessons/lesson05/zero-calc.js) must show for a setting: the
lesson's formulas' numbers (tests/lesson_content/lesson05_formulas.py) and the reference solution's total; random
settings as its URL fragment writes them. Used on the pandoc page and on Quarto's."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest

from course.lab.formulas import comm_elements
from solutions.lesson05 import zero_memory_per_gpu
from tests.lesson_content.lesson05_formulas import memory_parts

GIB = 2**30
QUANTITIES = ("memory", "memory-params", "memory-grads", "memory-optimizer", "traffic")


def random_setting(rng: random.Random) -> dict:
    """A setting as the fragment writes it: Ψ an integer (plain or in e-notation), N_d up to 4096, any stage, k a
    whole or half number of bytes, accumulation on or off, one of the three cards."""
    psi = rng.choice([rng.randint(1, 10**13), rng.randint(1, 999) * 10 ** rng.randint(6, 10)])
    text = f"{psi / 10**9:g}e9" if psi % 10**8 == 0 and rng.random() < 0.5 else str(psi)
    return {
        "psi": text,
        "nd": str(rng.choice([1, 2, rng.randint(1, 4096)])),
        "stage": str(rng.randint(0, 3)),
        "k": str(rng.choice([12, 0, 4, rng.randint(1, 20), rng.randint(1, 40) / 2])),
        "accum": str(rng.randint(0, 1)),
        "card": str(rng.choice([24, 40, 80])),
    }


def fragment(setting: dict) -> str:
    return "#zero-calc?" + "&".join(f"{key}={value}" for key, value in setting.items())


def expected(setting: dict) -> dict[str, Fraction]:
    """The lesson's formulas for SETTING, exactly."""
    psi, nd, stage = Fraction(setting["psi"]), int(setting["nd"]), int(setting["stage"])
    parts = memory_parts(psi, nd, stage, Fraction(setting["k"]), setting["accum"] == "1")
    total = sum(parts.values())
    return {
        "memory": total,
        **{f"memory-{name}": value for name, value in parts.items()},
        "traffic": comm_elements(psi, nd, stage),
    }


# What the calculator shows, read in one call into the page: every element of each quantity (there must be one),
# the verdict and the bars' heading.
READ = """() => {
    const all = (selector, read) => [...document.querySelectorAll("#zero-calc " + selector)].map(read);
    return {
        values: Object.fromEntries(%s.map(q => [q, all(`[data-quantity='${q}']`, e => e.getAttribute("data-value"))])),
        fits: all("[data-fits]", e => e.getAttribute("data-fits")),
        heading: all(".zc-heading", e => e.textContent),
    };
}"""


def showing(page) -> dict:
    """The quantities' values, the verdict and the heading the calculator shows now."""
    read = page.evaluate(READ % json.dumps(QUANTITIES))
    assert all(len(found) == 1 for found in read["values"].values()), read["values"]
    return read


def shown(page) -> dict[str, float]:
    return {q: float(value) for q, [value] in showing(page)["values"].items()}


def assert_shows(page, setting: dict) -> None:
    """Every shown value is the formulas' (to a double's precision), the total also the reference solution's, and the
    verdict says whether the total fits the card, and the bars' heading names what their length is measured against."""
    read, want = showing(page), expected(setting)
    values = {q: float(value) for q, [value] in read["values"].items()}
    for name in QUANTITIES:
        assert values[name] == pytest.approx(float(want[name]), rel=1e-12, abs=0), (setting, name)
    solution = zero_memory_per_gpu(
        int(Fraction(setting["psi"])),
        int(setting["nd"]),
        int(setting["stage"]),
        k=float(setting["k"]),
        fp32_grad_accum=setting["accum"] == "1",
    )
    assert values["memory"] == pytest.approx(solution, rel=1e-12)
    capacity = int(setting["card"]) * GIB
    if abs(want["memory"] - capacity) > capacity * Fraction(1, 10**9):
        assert read["fits"] == ["1" if want["memory"] <= capacity else "0"], setting
        basis = f" {setting['card']} GiB 的卡" if want["memory"] <= capacity else "合计显存"
        assert read["heading"] == [f"每卡静态显存（条长按{basis}计）："], setting
