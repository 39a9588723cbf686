"""One headless Chromium per pytest process (one per xdist worker), shared by every browser test: the Debian
package's binary driven by Playwright (executable_path), started when a test first asks for it and closed when the
session ends. Each test gets a fresh browser context of its own (no cookies, storage or cache of another test);
tests keep its pages offline with tests/offline_page.keep_offline.

Playwright's sync API marks its event loop as the thread's running loop for as long as it runs, so `asyncio.run`
(and a second Playwright, as the feedback's diagram drawing starts) would fail in every later test of the process.
The mark is therefore kept only while a module that drives the browser runs and taken away for every other module.
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

import pytest

SHARED = pytest.StashKey["SharedChromium"]()


class SharedChromium:
    """Playwright and the Chromium it launched, with the event loop Playwright keeps running between calls."""

    def __init__(self):
        from playwright.sync_api import sync_playwright

        from course.tools.chromium import QUIET_FLAGS, chromium_path

        executable = chromium_path()  # a missing Chromium names its package before anything starts
        self._playwright = sync_playwright().start()
        self._loop = asyncio.get_running_loop()  # Playwright's own, marked as running in this thread
        try:
            self.browser = self._playwright.chromium.launch(executable_path=executable, headless=True, args=QUIET_FLAGS)
        except BaseException:
            self._playwright.stop()
            raise

    def in_use(self, driving: bool) -> None:
        """Mark Playwright's loop as this thread's running loop while DRIVING, and no loop otherwise."""
        asyncio.events._set_running_loop(self._loop if driving else None)

    def close(self) -> None:
        """Close Chromium and stop Playwright (its loop marked again: Playwright expects it while it runs)."""
        self.in_use(True)
        try:
            self.browser.close()
        finally:
            self._playwright.stop()


@pytest.fixture(scope="session")
def chromium(request):
    """The process's Chromium (a Playwright Browser); a test that needs several people at once opens a context
    for each (browser.new_context()), and closes them."""
    shared = request.config.stash[SHARED] = SharedChromium()
    yield shared.browser
    del request.config.stash[SHARED]
    shared.close()


@pytest.fixture
def browser(chromium):
    """A fresh browser context on the process's Chromium, closed after the test (pages: browser.new_page())."""
    context = chromium.new_context()
    yield context
    context.close()


@contextmanager
def kept_open(chromium, open_page):
    """For a module fixture (`with kept_open(…) as page_at: yield page_at`): page_at(*KEY) is what OPEN_PAGE(context,
    *KEY) returned ((page, …)), opened once in a browser context of the module's own and brought to the front each
    time it is asked for: Chromium draws no frame for a page behind another, so waits for a frame would stall."""
    context, pages = chromium.new_context(), {}

    def page_at(*key):
        if key not in pages:
            pages[key] = open_page(context, *key)
        pages[key][0].bring_to_front()
        return pages[key]

    try:
        yield page_at
    finally:
        context.close()


def drives_the_browser(module: pytest.Module) -> bool:
    """Whether a test of MODULE uses the shared Chromium (directly or through its fixtures)."""
    return any(
        "chromium" in item.fixturenames for item in module.session.items if item.getparent(pytest.Module) is module
    )


@pytest.fixture(scope="module", autouse=True)
def playwright_loop_only_in_browser_modules(request):
    """Playwright's loop counts as running only in the modules that drive the browser (see the module's note)."""
    shared = request.config.stash.get(SHARED, None)
    if shared is not None:
        shared.in_use(drives_the_browser(request.node))
    yield
    shared = request.config.stash.get(SHARED, None)
    if shared is not None:
        shared.in_use(False)
