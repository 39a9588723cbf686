"""tests/shared_browser.py: one Chromium for every browser test of a pytest process, a fresh context for each test,
and asyncio (and a Playwright of its own, as the feedback's diagram drawing starts) still working in the modules
that do not drive the browser, run after one that did."""

from __future__ import annotations

import pytest

from tests.probe_run import run_probes

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFTEST = "from tests.shared_browser import browser, chromium, playwright_loop_only_in_browser_modules  # noqa: F401\n"
PROBES = {
    "test_1_browser.py": """
def test_a_cookie_is_set(browser, chromium):
    open({seen!r}, "a").write(f"{{id(chromium)}}\\n")
    browser.add_cookies([{{"name": "left", "value": "behind", "url": "http://127.0.0.1/"}}])
    assert browser.cookies()


def test_the_next_test_has_a_fresh_context(browser):
    page = browser.new_page()
    page.set_content("<p>fresh</p>")
    assert page.inner_text("p") == "fresh" and browser.cookies() == []
""",
    "test_2_elsewhere.py": """
import asyncio


def test_asyncio_runs():
    async def seven():
        return 7
    assert asyncio.run(seven()) == 7


def test_a_playwright_of_its_own_starts():
    from course.tools.chromium import launch_chromium

    with launch_chromium() as context:
        page = context.new_page()
        page.set_content("<b>own</b>")
        assert page.inner_text("b") == "own"
""",
    "test_3_browser_again.py": """
import pytest


@pytest.fixture(scope="module")
def page(chromium):
    open({seen!r}, "a").write(f"{{id(chromium)}}\\n")
    page = chromium.new_page()
    page.set_content("<i>module</i>")
    yield page
    page.close()


def test_a_module_page(page):
    assert page.inner_text("i") == "module"


def test_then_asyncio_in_the_next_module():
    pass
""",
}


def test_one_chromium_a_fresh_context_per_test_and_asyncio_elsewhere(tmp_path):
    probes, seen = tmp_path / "probes", tmp_path / "seen.txt"
    files = {name: text.format(seen=str(seen)) for name, text in PROBES.items()}
    files["test_4_elsewhere_again.py"] = files["test_2_elsewhere.py"]
    run = run_probes(probes, {"conftest.py": CONFTEST, **files}, "-p", "no:xdist")
    assert run.returncode == 0 and "8 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert len(set(seen.read_text("utf-8").split())) == 1  # both browser modules had the same Chromium
