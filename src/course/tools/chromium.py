"""Headless Chromium (Debian package `chromium`) driven by Playwright's Python package, for page tests."""

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


def chromium_path() -> str:
    """The system Chromium binary, or a ToolMissing that says how to install it."""
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    raise ToolMissing("chromium not found; install it with `apt-get install chromium` (run `make`, which does it)")


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
