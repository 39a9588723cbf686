"""Headless Chromium driven by Playwright's Python package: the feedback's diagrams and the page tests.

Everything the course does with Chromium is headless, so it prefers Debian's `chromium-headless-shell`: the same
Chromium (Blink, V8, Skia) built without the desktop browser around it, the build Playwright itself runs headless
pages on. It opens, lays out and draws lesson 5's page with about half the CPU of the `chromium` package's headless
mode (1.2-1.5 against 2.2-2.5 CPU-s a page, ten pages in one browser, process accounting); Pyodide's and the pages'
own scripts cost the same in both. Where only `chromium` is installed, that is used.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from course.errors import ToolMissing

# Without these, Chromium keeps reaching for update and sync hosts that a closed network refuses.
QUIET_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


# The system's Chromium builds, the headless one first.
BINARIES = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium_path() -> str:
    """The system Chromium binary (the headless shell where installed), or a ToolMissing that says how to install it."""
    for name in BINARIES:
        if path := shutil.which(name):
            return path
    raise ToolMissing(
        "chromium not found; install it with `apt-get install chromium-headless-shell` (or `chromium`; run `make`, "
        "which does it)"
    )


@contextmanager
def launch_chromium() -> Iterator[object]:
    """A Playwright browser on the system Chromium with a throwaway profile."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ToolMissing("playwright not installed; `pip install -e '.[test]'` (run `make`)") from None
    exe = chromium_path()
    with tempfile.TemporaryDirectory(prefix="course-chromium-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(profile, executable_path=exe, headless=True, args=QUIET_FLAGS)
        try:
            yield context
        finally:
            context.close()
