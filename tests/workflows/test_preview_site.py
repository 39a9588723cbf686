"""course preview: on a copy of the project with a second lesson, an edit to that lesson is served within 5 s and
rebuilds that lesson only (the other lesson's files and the other variant are not rewritten); a broken edit prints
its located error while the last good site stays served; Ctrl-C stops the watcher and the server and frees the port.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.site.plan import make_plan
from course.site.serve_preview import VERSION_PATH
from course.workflows.preview_site import InputFilter, watched_paths
from tests.loopback import free_port
from tests.project_copy import ADDED, copy_built, with_added_lesson

pytestmark = [pytest.mark.slow, pytest.mark.waits]

KEPT = "lesson05"  # the project's own lesson: an edit to the added one must leave its files alone


@pytest.fixture
def project(built_site, tmp_path_factory, tmp_path) -> Path:
    """The test's own copy of the project with a lesson added, both variants built (made once per run:
    tests/project_copy.py, copied with its sites hard-linked): an edit a failed test leaves reaches no other test."""
    return copy_built(with_added_lesson(tmp_path_factory), tmp_path / "project")


def as_from_a_terminal() -> None:
    """In the preview's process before it starts: SIGINT at its default (a pytest-xdist worker ignores it, and a
    child would inherit that), and as root a higher priority than the test workers beside it, so that the time an
    edit takes to be served is the preview's own, as on an author's machine, not a share of a busy one's."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if os.geteuid() == 0:
        os.nice(-10)


class Preview:
    """`course preview` running in its own process on a free loopback port, its log collected line by line."""

    def __init__(self, project: Path, *args: str):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "course", "preview", "--root", str(project), "--port", str(self.port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            preexec_fn=as_from_a_terminal,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self._reader.start()
        self.wait_for("serving the", timeout=120)

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, *, timeout: float, after: int = 0) -> str:
        """The first log line from line AFTER on that contains TEXT."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines[after:] if text in line]
            if found:
                return found[0]
            assert self.proc.poll() is None, f"preview exited {self.proc.returncode}:\n{self.log}"
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in the preview's log within {timeout} s:\n{self.log}")

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as response:
            return response.read().decode("utf-8")

    def interrupt(self) -> int:
        """Ctrl-C, as a terminal sends it; the exit status."""
        self.proc.send_signal(signal.SIGINT)
        status = self.proc.wait(timeout=30)
        self._reader.join(timeout=5)  # the log up to its last line
        return status

    def __enter__(self) -> Preview:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def files_of(site: Path) -> dict[str, tuple[int, int]]:
    """Every file of a site with its inode and modification time: rewritten files change either."""
    return {
        p.relative_to(site).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def edit(qmd: Path, old: str, new: str) -> str:
    """Replace OLD by NEW in the lesson's text, as an author saving it; returns the text before."""
    text = qmd.read_text("utf-8")
    assert old in text
    qmd.write_text(text.replace(old, new, 1), "utf-8")
    return text


def test_an_edit_is_served_within_5_s_and_rebuilds_only_the_edited_lesson(project):
    site = project / "_site"
    with Preview(project) as preview:
        page = preview.get(f"/{ADDED}.html")
        assert VERSION_PATH in page and VERSION_PATH not in (site / "student" / f"{ADDED}.html").read_text("utf-8")
        version = preview.get(VERSION_PATH)
        kept = {name: stat for name, stat in files_of(site / "student").items() if name.startswith(KEPT)}
        front = yaml.safe_load((project / "lessons" / f"{KEPT}.qmd").read_text("utf-8").split("---")[1])
        assets = [f"{KEPT}/{name}" for name in front.get("page-assets", [])]  # the lesson's own scripts, beside it
        assert sorted(kept) == sorted([f"{KEPT}.html", notes_notebook(KEPT), assignment_notebook(KEPT), *assets])
        answer = files_of(site / "answer")
        logged = len(preview.lines)
        marker = f"PREVIEW-EDIT-{time.time_ns()}"
        edit(project / "lessons" / f"{ADDED}.qmd", "回顾第 5 课：", f"回顾第 5 课（{marker}）：")
        start = time.monotonic()
        while marker not in preview.get(f"/{ADDED}.html"):
            assert time.monotonic() - start < 5, f"the edit was not served within 5 s:\n{preview.log}"
            time.sleep(0.05)
        latency = time.monotonic() - start
        print(f"edit -> page changed: {latency:.2f} s")
        quick = preview.wait_for("rebuilt", timeout=5, after=logged)
        start = time.monotonic()
        while preview.get(VERSION_PATH) == version:  # bumped just after the new site is in place: pages reload
            assert time.monotonic() - start < 2, "the site's version did not change"
            time.sleep(0.02)
        print(quick.strip())
        assert f"rebuilt {ADDED} (1 of 2 lesson(s))" in quick and f"assignment of {ADDED} released when" in quick
        # once the edits pause, stock nbgrader releases the edited lesson's assignment (seconds), and only its
        preview.wait_for(f"released the assignments and rebuilt {ADDED} (1 of 2", timeout=90, after=logged)
        assert marker in preview.get(f"/{assignment_notebook(ADDED)}")
        assert {n: s for n, s in files_of(site / "student").items() if n.startswith(KEPT)} == kept
        assert files_of(site / "answer") == answer
        index = preview.get("/")
        assert f'href="{assignment_notebook(KEPT)}"' in index and f'href="{ADDED}.html"' in index
        assert preview.interrupt() == 130


def test_a_broken_edit_prints_the_located_error_and_the_last_good_site_stays_served(project):
    qmd = project / "lessons" / f"{ADDED}.qmd"
    with Preview(project) as preview:
        good = preview.get(f"/{ADDED}.html")
        logged = len(preview.lines)
        before = edit(qmd, "## 本课目标", "![缺图](../assets/none.png)\n\n## 本课目标")
        line = qmd.read_text("utf-8").splitlines().index("![缺图](../assets/none.png)") + 1
        error = preview.wait_for("image ../assets/none.png not found", timeout=30, after=logged)
        assert f"{ADDED}.qmd, line {line}: image ../assets/none.png not found" in error
        assert "still serving the last good site" in preview.log
        assert preview.get(f"/{ADDED}.html") == good
        qmd.write_text(before, "utf-8")  # the fix: the site as it was is up to date again
        preview.wait_for("up to date", timeout=30, after=logged)
        assert preview.proc.poll() is None and "Traceback" not in preview.log
        assert preview.interrupt() == 130


def test_ctrl_c_stops_the_answer_preview_cleanly_and_frees_the_port(project):
    with Preview(project, "--variant", "answer") as preview:
        assert "参考答案版" in preview.get("/") and "answer" in preview.wait_for("serving the", timeout=1)
        assert preview.interrupt() == 130
        assert "Traceback" not in preview.log and preview.lines[-1] == "course preview: stopped\n", preview.log
    with socket.socket() as client:
        assert client.connect_ex(("127.0.0.1", preview.port)) != 0  # nobody listens any more
    with socket.socket() as server:  # and the next preview can listen there (as http.server does: SO_REUSEADDR)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", preview.port))
        server.listen()


@pytest.mark.browser
def test_the_open_page_reloads_itself_after_a_rebuild(project, browser):
    """Chromium keeps the served page open; after an edit the page shows it without anyone reloading it."""
    with Preview(project) as preview:
        page = browser.new_page()
        elsewhere = []

        def guard(route):
            local = route.request.url.startswith(f"http://127.0.0.1:{preview.port}/")
            route.continue_() if local else (elsewhere.append(route.request.url), route.abort())

        page.route("**/*", guard)
        page.goto(f"http://127.0.0.1:{preview.port}/{ADDED}.html")
        marker = f"RELOADED-{time.time_ns()}"
        page.evaluate("() => { window.sameDocument = true; }")
        edit(project / "lessons" / f"{ADDED}.qmd", "## 本课目标", f"## 本课目标\n\n{marker}\n")
        page.wait_for_function(f"() => document.body.innerText.includes({marker!r})", timeout=10000)
        assert page.evaluate("() => window.sameDocument === undefined")  # a new document: the page reloaded
        assert not elsewhere
        page.close()
        assert preview.interrupt() == 130


def test_only_build_inputs_start_a_build_not_generated_assets_or_half_written_files(project_root):
    from watchfiles import Change

    plan = make_plan(project_root)
    starts = InputFilter(plan)
    assert project_root / "lessons" in watched_paths(plan) and project_root / "_site" not in watched_paths(plan)
    for path in ("lessons/lesson05.qmd", "lessons/lesson05/checks.yml", "solutions/lesson05.py", "pyproject.toml"):
        assert starts(Change.modified, str(project_root / path)), path
    for path in (
        "assets/figs/train_zero_memory.png",
        "assets/zero3_comm_flow.svg",
        "assets/lab/zero_measured.json",
        "assets/.zero3_comm_flow.svg.k2j3h4.tmp",
        "lessons/lesson05/__pycache__/figures.cpython-311.pyc",
        "lessons/.lesson05.qmd.swp",
        # what a `quarto render` in the same checkout writes beside lesson05.qmd while it renders it
        "lessons/lesson05.quarto_ipynb",
        "lessons/lesson05.html",
        "lessons/lesson05_files/figure-html/lab-figure-output-1.png",
    ):
        assert not starts(Change.added, str(project_root / path)), path
