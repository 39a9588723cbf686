"""Lesson 5's memory and traffic calculator (lessons/lesson05/zero-calc.js) in headless Chromium, offline: every
number it shows is the lesson's formulas' (tests/lesson_content/lesson05_formulas.py, on course.lab.formulas, and the
reference solution's zero_memory_per_gpu), for settings opened from the URL fragment and typed into its inputs;
it is usable by keyboard, labelled, fits 390 px, and the student site ships it without solution code."""

from __future__ import annotations

import random
from fractions import Fraction
from urllib.parse import parse_qsl

import pytest

from tests.lesson_content.lesson05_calculator import assert_shows, fragment, random_setting, shown
from tests.offline_page import keep_offline

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long(18)]

CONTROLS = ("zc-preset", "zc-psi", "zc-nd", "zc-stage", "zc-k", "zc-accum", "zc-card")
# Llama-2-70B's shapes as the lesson gives them: 80 layers, h = 8192, FFN 28672, 64 heads with 8 K/V heads; 32000
# tokens, untied output layer; two RMSNorms per layer and one at the end.
LAYERS, HIDDEN, FFN, HEADS, KV_HEADS, VOCAB = 80, 8192, 28672, 64, 8, 32000


def open_calc(context, url: str):
    """A new page of CONTEXT on URL, the calculator drawn; the requests that left the machine and the page's errors."""
    page = context.new_page()
    remote, errors = keep_offline(page), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#zero-calc [data-quantity=memory]")
    return page, remote, errors


@pytest.fixture(scope="module")
def settled(chromium, built_site):
    """One page on the student site's lesson 5 for the tests that set the inputs they read themselves and put back
    what else they change, so that what an earlier one left changes nothing (a page of lesson 5 costs seconds of CPU
    to lay out)."""
    context = chromium.new_context()
    page, remote, errors = open_calc(context, (built_site / "student" / "lesson05.html").as_uri())
    yield page
    context.close()
    assert not remote and not errors


def fragment_setting(page) -> dict:
    """The setting the page's URL fragment holds now."""
    hash_ = page.evaluate("location.hash")
    assert hash_.startswith("#zero-calc?")
    return dict(parse_qsl(hash_.split("?", 1)[1]))


def test_the_issues_link_opens_exactly_that_setting(browser, built_site):
    link = "#zero-calc?psi=7.5e9&nd=64&stage=3&k=12&accum=0&card=24"
    calc, remote, errors = open_calc(browser, (built_site / "student" / "lesson05.html").as_uri() + link)  # a new tab
    assert [calc.input_value(f"#{c}") for c in ("zc-psi", "zc-nd", "zc-stage", "zc-k", "zc-card")] == [
        "7500000000",
        "64",
        "3",
        "12",
        "24",
    ]
    assert not calc.is_checked("#zc-accum")
    assert shown(calc)["memory"] == 16 * 7.5e9 / 64 == 1.875e9  # §2: 16Ψ/N_d
    assert_shows(calc, {"psi": "7.5e9", "nd": "64", "stage": "3", "k": "12", "accum": "0", "card": "24"})
    assert not remote and not errors


def test_fifty_random_fragments_show_the_lessons_numbers(settled):
    calc = settled
    rng = random.Random(20261206)
    for _ in range(50):
        setting = random_setting(rng)
        # The test's listener runs after the calculator's, registered first: the page has applied the fragment.
        calc.evaluate(
            "hash => new Promise(done => { addEventListener('hashchange', done, {once: true}); "
            "location.hash = hash; })",
            fragment(setting),
        )
        assert_shows(calc, setting)


def test_fifty_random_settings_typed_into_the_inputs_show_the_lessons_numbers_and_go_into_the_fragment(settled):
    calc = settled
    rng = random.Random(40)
    for _ in range(50):
        setting = random_setting(rng)
        calc.fill("#zc-psi", setting["psi"])
        calc.fill("#zc-nd", setting["nd"])
        calc.select_option("#zc-stage", setting["stage"])
        calc.fill("#zc-k", setting["k"])
        calc.set_checked("#zc-accum", setting["accum"] == "1")
        calc.select_option("#zc-card", setting["card"])
        assert_shows(calc, setting)
        now = fragment_setting(calc)
        assert {k: Fraction(v) for k, v in now.items()} == {k: Fraction(v) for k, v in setting.items()}


def test_the_presets_are_the_lessons_models(settled):
    """7B is Ψ = 7×10⁹; Llama-2-70B's shapes count what the lesson's per-layer figure (about 0.856×10⁹) says."""
    calc = settled
    per_layer = 2 * HIDDEN * HIDDEN + 2 * HIDDEN * (HIDDEN * KV_HEADS // HEADS) + 3 * HIDDEN * FFN + 2 * HIDDEN
    assert round(per_layer / 1e9, 3) == 0.856
    llama = LAYERS * per_layer + 2 * VOCAB * HIDDEN + HIDDEN
    for preset, psi in (("7b", 7 * 10**9), ("70b", 70 * 10**9), ("llama2-70b", llama)):
        calc.select_option("#zc-preset", preset)
        assert int(calc.input_value("#zc-psi")) == psi
        assert Fraction(fragment_setting(calc)["psi"]) == psi
    calc.fill("#zc-psi", "123")
    assert calc.input_value("#zc-preset") == ""  # a typed Ψ is no preset


def test_a_bad_setting_says_what_to_enter_and_shows_no_number(settled):
    calc = settled
    nd = calc.input_value("#zc-nd")
    calc.fill("#zc-nd", "0")
    assert "N_d" in calc.inner_text("#zero-calc .zc-results")
    assert calc.locator("#zero-calc [data-quantity]").count() == 0
    calc.fill("#zc-nd", nd)  # put back, for the module's other tests
    assert calc.locator("#zero-calc [data-quantity]").count() > 0


def test_every_control_has_a_label_the_results_are_announced_and_the_keyboard_reaches_and_changes_everything(settled):
    calc = settled
    for control in CONTROLS:
        assert calc.evaluate("id => document.getElementById(id).labels[0].textContent.trim().length", control) > 1
    assert calc.get_attribute("#zero-calc .zc-results", "aria-live") == "polite"
    calc.focus("#zc-preset")
    order = [calc.evaluate("document.activeElement.id")]
    for _ in CONTROLS[1:]:
        calc.keyboard.press("Tab")
        order.append(calc.evaluate("document.activeElement.id"))
    assert order == list(CONTROLS)
    calc.focus("#zc-nd")
    calc.keyboard.press("Control+A")
    calc.keyboard.type("16")
    calc.focus("#zc-stage")
    calc.select_option("#zc-stage", "3")
    calc.keyboard.press("ArrowUp")  # ZeRO-3 → ZeRO-2, from the keyboard
    calc.set_checked("#zc-accum", False)  # whatever an earlier test left: Space then turns it on
    calc.focus("#zc-accum")
    calc.keyboard.press("Space")
    setting = fragment_setting(calc)
    assert (setting["nd"], setting["stage"], setting["accum"]) == ("16", "2", "1")
    assert_shows(calc, setting)


@pytest.fixture(params=["student", "answer"])
def at_390px(request, settled, browser, built_site):
    """Lesson 5's page of the site at 390 px: the module's student page (its size put back after), or a fresh page
    of the answer site whose requests must stay on the machine and raise nothing."""
    if request.param == "student":
        size = settled.viewport_size
        settled.set_viewport_size({"width": 390, "height": 844})
        yield settled
        settled.set_viewport_size(size)
        return
    page, remote, errors = open_calc(browser, (built_site / request.param / "lesson05.html").as_uri())
    page.set_viewport_size({"width": 390, "height": 844})
    yield page
    page.close()
    assert not remote and not errors


def test_at_390px_the_calculator_fits_without_sideways_scrolling(at_390px):
    calc = at_390px
    calc.select_option("#zc-preset", "llama2-70b")
    calc.set_checked("#zc-accum", True)
    calc.locator("#zero-calc").scroll_into_view_if_needed()
    assert calc.evaluate("document.documentElement.scrollWidth") <= 390
    box = calc.locator("#zero-calc").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    for control in CONTROLS:
        b = calc.locator(f"#{control}").bounding_box()
        assert b["x"] >= 0 and b["x"] + b["width"] <= 390, control
