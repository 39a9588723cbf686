"""The course's JupyterHub, played through one whole round in headless Chromium, with real local accounts.

`course hub` starts the hub as docs/hub-operators.md says (shared-password login, each account's server run as that
account from this project's .venv); a student fetches lesson05 in the Assignments tab, fills the blanks and answers
Q1–Q3 in JupyterLab, validates and submits; the instructor collects and runs stock `nbgrader autograde` as the
course's grading account; a grader enters Q1–Q3 in formgrader beside the 要点; feedback is released and the
student fetches and reads it. Students see only the student tools, staff the rest. Only 127.0.0.1 is reached.
The hub and the grading account's commands run where the folders other accounts cannot enter on the way to this
project's Python (/root) are seen open (tests/open_view.py): no folder of the machine changes mode.
"""

from __future__ import annotations

import http.client
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from course.hub.role_config import config_path
from course.nbgrader_hooks.config import COURSE_ID
from tests.assignment.make_submissions import CORRECT
from tests.loopback import free_ports
from tests.open_view import in_open_view

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.hub, pytest.mark.long(95), pytest.mark.waits]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PASSWORD = "course-hub-trial"
ANSWERS = {
    "Q1": "ZeRO-3 把激活也分片到各张卡上，所以训练长序列时激活显存会随 N_d 线性下降。",  # a veto hint
    "Q2": "reduce-scatter 与 all-gather 各 Ψ，合起来正是一次 all-reduce 的 2Ψ。",
    "Q3": "前向 all-gather、反向 all-gather 与梯度 reduce-scatter 各 Ψ，共 3Ψ。",
}
POINTS = {"Q1": "0", "Q2": "1.5", "Q3": "2"}


def _account_pids(names) -> list[int]:
    """Processes still running as the test's accounts."""
    uids = {pwd.getpwnam(n).pw_uid for n in names}
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                pass
    return pids


@pytest.fixture(scope="module")
def hub_site(released):
    """Accounts, a course root owned by the grading account, and the folders other accounts need to see opened."""
    if os.geteuid() != 0:
        pytest.fail("the hub round creates local accounts and starts servers as them: run the tests as root")
    from course.workflows.serve_hub import closed_folders

    base = Path(tempfile.mkdtemp(prefix="course-hub-"))
    base.chmod(0o755)
    tag = f"ch{os.getpid() % 100000}"
    names = {"instructor": f"{tag}i", "grader": f"{tag}g", "student": f"{tag}s", "grading": f"{tag}c"}
    (base / "home").mkdir(mode=0o755)
    created = []
    try:
        for name in names.values():
            subprocess.run(
                [
                    "useradd",
                    "--create-home",
                    "--home-dir",
                    str(base / "home" / name),
                    "--user-group",
                    "--shell",
                    "/bin/bash",
                    name,
                ],
                check=True,
            )
            created.append(name)
        shutil.copytree(released.parent, base / "course")
        # the course root sits in a checkout of the project, as autograder/ does: formgrader inlines its MathJax
        shutil.copy(ROOT / "package.json", base / "course")
        (base / "course" / "node_modules").symlink_to(ROOT / "node_modules")
        course_root = base / "course" / "autograder"
        subprocess.run(["chown", "-R", f"{names['grading']}:", str(course_root)], check=True)
        roster = base / "roster.yml"
        roster.write_text(
            f"version: 1\ninstructors: [{names['instructor']}]\ngraders: [{names['grader']}]\n"
            f"students: [{names['student']}]\ngrading_account: {names['grading']}\n",
            "utf-8",
        )
        yield {
            "base": base,
            "course_root": course_root,
            "roster": roster,
            "names": names,
            "closed": closed_folders(ROOT, course_root),
        }
    finally:
        for pid in _account_pids(created):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for name in created:
            subprocess.run(["userdel", name], check=False)
        shutil.rmtree(base, ignore_errors=True)


def _status(port: int, path: str) -> int | None:
    """The HTTP status of GET PATH on 127.0.0.1:PORT (redirects not followed), None when nothing answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return None
    finally:
        conn.close()


@pytest.fixture(scope="module")
def hub(hub_site, tmp_path_factory):
    """`course hub` running on 127.0.0.1; stopped (with every server it started) at the end."""
    port = free_ports(4)  # the hub uses four in a row
    state = hub_site["base"] / "state"
    log_path = tmp_path_factory.mktemp("hub") / "hub.log"  # kept by pytest for a failed run
    log = log_path.open("wb")
    env = {**os.environ, "COURSE_HUB_SHARED_PASSWORD": PASSWORD}
    command = [
        str(VENV_BIN / "course"),
        "hub",
        "--root",
        str(ROOT),
        "--course-root",
        str(hub_site["course_root"]),
        "--roster",
        str(hub_site["roster"]),
        "--state",
        str(state),
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(
        in_open_view(command, hub_site["closed"]),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        # up when the hub answers and the course's shared server asks for a login (302), not the proxy's 503
        while not (_status(port, "/hub/api") == 200 and _status(port, f"/services/{COURSE_ID}/") == 302):
            assert proc.poll() is None, log_path.read_text("utf-8", "replace")[-3000:]
            assert time.monotonic() < deadline, "the hub did not come up within 180 s; see " + str(log_path)
            time.sleep(0.2)
        yield {**hub_site, "url": url, "state": state, "log": log_path}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            _stop_proxy(state / "proxy.pid")  # the hub would have stopped it; the accounts' servers go with them
        log.close()


def _stop_proxy(pid_file: Path) -> None:
    """Stop the proxy a killed hub left behind (its pid file names it)."""
    try:
        pid = int(pid_file.read_text().strip())
        if b"configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


def instructor(hub, *args: str) -> str:
    """Run a stock nbgrader command as the course's grading account in the course root (its terminal there)."""
    name = hub["names"]["grading"]
    env = {
        "HOME": pwd.getpwnam(name).pw_dir,
        "PATH": f"{VENV_BIN}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "JUPYTER_CONFIG_PATH": os.pathsep.join(map(str, config_path(hub["state"] / "jupyter", "course"))),
    }
    command = [
        "runuser",
        "-u",
        name,
        "--",
        "env",
        "-i",
        *(f"{k}={v}" for k, v in env.items()),
        str(VENV_BIN / "nbgrader"),
        *args,
    ]
    done = subprocess.run(
        in_open_view(command, hub["closed"]), cwd=hub["course_root"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


class Session:
    """One person in their own browser context, logged in to the hub; requests off 127.0.0.1 are refused. Logged in
    to go to NEXT (a path on the hub), they start no server of their own; else theirs starts and shows JupyterLab."""

    def __init__(self, browser, hub, who: str, next: str | None = None):
        self.hub, self.name = hub, hub["names"][who]
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.remote: list[str] = []
        self.context.route("**/*", self._guard)
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.page.goto(f"{hub['url']}/hub/login" + (f"?next={quote(next)}" if next else ""))
        self.page.fill("#username_input", self.name)
        self.page.fill("#password_input", PASSWORD)
        self.page.click("#login_submit")
        if next:
            self.page.wait_for_url(hub["url"] + next, timeout=120_000)
            return
        self.page.wait_for_url(f"**/user/{self.name}/lab**", timeout=240_000)  # the server starts on login
        self.page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)

    def _guard(self, route):
        if route.request.url.startswith(self.hub["url"] + "/"):
            route.continue_()
        else:
            self.remote.append(route.request.url)
            route.abort()

    def nbgrader_menu(self) -> list[str]:
        """The items of JupyterLab's Nbgrader menu (the menu stays open)."""
        menu = self.page.locator(".lm-Menu")
        for _ in range(5):  # a click while JupyterLab is still settling may not open it
            self.page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
            try:
                menu.wait_for(timeout=5000)
                break
            except PlaywrightTimeout:
                self.page.keyboard.press("Escape")
        return [t.strip() for t in self.page.locator(".lm-Menu .lm-Menu-itemLabel").all_inner_texts() if t.strip()]

    def sidebar_titles(self) -> list[str]:
        return [t.get_attribute("title") or "" for t in self.page.locator(".jp-SideBar .lm-TabBar-tab").all()]

    def assignments_tab(self):
        """Open the Assignments tab from the Nbgrader menu."""
        self.nbgrader_menu()
        self.page.locator(".lm-Menu").get_by_text("Assignment List").click()
        self.page.locator("#released_assignments_list_loading").wait_for(state="hidden")

    def close(self):
        self.context.close()


def _filled_exercise(release: nbformat.NotebookNode) -> tuple[int, str]:
    """The exercise cell's index and its source with every blank filled correctly."""
    [index] = [
        i
        for i, c in enumerate(release.cells)
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]
    source = release.cells[index].source
    for formula in CORRECT:
        source = source.replace("______", formula, 1)
    assert "______" not in source
    return index, source


def _answer_cells(release: nbformat.NotebookNode) -> dict[str, int]:
    return {
        c.metadata["nbgrader"]["grade_id"].removeprefix("answer-"): i
        for i, c in enumerate(release.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("answer-")
    }


def test_a_whole_round_on_the_hub(hub, chromium, release_nb):
    names = hub["names"]
    instructor(hub, "release_assignment", "lesson05")
    # the hub-level exchange root and course id win over the course config's defaults
    assert (hub["state"] / "exchange" / COURSE_ID / "outbound" / "lesson05" / "lesson05.ipynb").is_file()
    assert not (hub["course_root"] / "exchange").exists()

    # The student: only the student tools, then fetch, fill, validate, submit.
    student = Session(chromium, hub, "student")
    page = student.page
    assert student.nbgrader_menu() == ["Assignment List"]
    page.keyboard.press("Escape")
    assert not any("Create Assignment" in t for t in student.sidebar_titles())
    assert page.request.get(f"{hub['url']}/user/{student.name}/formgrader").status == 404  # not served either
    assert page.request.get(f"{hub['url']}/services/{COURSE_ID}/formgrader").status == 403  # nor the course's
    student.assignments_tab()
    page.locator("#released_assignments_list").get_by_role("button", name="Fetch").click()
    page.locator("#fetched_assignments_list a.assignment-notebooks-link", has_text="lesson05").click()
    page.locator("#fetched_assignments_list .nested_list_item a", has_text="lesson05").click()
    notebook = page.locator(".jp-NotebookPanel").last
    cells = notebook.locator(".jp-Cell")
    exercise, source = _filled_exercise(release_nb)
    expect(cells.nth(exercise).locator(".cm-content")).to_contain_text("______", timeout=60_000)
    cells.nth(exercise).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    for qid, index in _answer_cells(release_nb).items():
        cell = cells.nth(index)
        cell.scroll_into_view_if_needed()
        cell.dblclick()
        cell.locator(".cm-content").click()
        page.keyboard.insert_text(ANSWERS[qid])
        page.keyboard.press("Control+Enter")
    page.keyboard.press("Control+s")
    page.locator(".lm-TabBar-tab.jp-mod-dirty").wait_for(state="detached")  # saved
    notebook.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_role("button", name="Ok").wait_for(timeout=180_000)
    assert "Success! Your notebook passes all the tests." in dialog.inner_text(), dialog.inner_text()
    dialog.get_by_role("button", name="Ok").click()
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#fetched_assignments_list").get_by_role("button", name="Submit").click()
    page.locator("#submitted_assignments_list .list_item").first.wait_for()

    # The instructor: the course's shared server has the instructors' tools; collect and autograde, stock.
    teacher = Session(chromium, hub, "instructor")
    assert teacher.nbgrader_menu() == ["Course List"]  # their own server links to the course's formgrader
    teacher.page.goto(f"{hub['url']}/services/{COURSE_ID}/lab")
    teacher.page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
    assert {"Formgrader", "Create assignment"} <= set(teacher.nbgrader_menu())
    assert "Nbgrader Create Assignment" in teacher.sidebar_titles()
    teacher.close()
    instructor(hub, "collect", "lesson05")
    graded = instructor(hub, "autograde", "lesson05")
    assert f"Autograding {hub['course_root']}/autograded/{names['student']}/lesson05/lesson05.ipynb" in graded

    # The grader: formgrader in the course's shared server, straight from the hub's login (no server of their own
    # needed), the 要点 beside each answer, Q1–Q3 entered.
    grader = Session(chromium, hub, "grader", next=f"/services/{COURSE_ID}/formgrader/gradebook/lesson05/lesson05")
    fg = grader.page
    fg.get_by_text("Submission #1").click()
    fg.wait_for_load_state("networkidle")  # formgrader has loaded each grade's model into its input
    fg.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    fg.evaluate("() => MathJax.startup.promise")
    assert fg.locator("mjx-container svg").count() > 20 and fg.locator("mjx-merror").count() == 0  # offline math
    hints = fg.locator("div.grader-hints")
    expect(hints).to_have_count(1)  # only the Q1 answer reads like a veto item
    expect(hints).to_contain_text("评分提示 · Q1")
    expect(hints).to_contain_text("activation-shard")
    for qid, points in POINTS.items():
        answer = fg.locator(".nbgrader_cell", has=fg.locator(f"input#answer-{qid}"))
        expect(answer).to_contain_text(ANSWERS[qid])
        key_points = fg.locator(".rubric-key-points", has_text=f"评分要点 · {qid}（2 分，仅评分者可见）")
        expect(key_points).to_be_visible()
        # below the answer it grades: read in one go (formgrader scrolls as focus moves between the score boxes)
        assert key_points.evaluate(
            "(kp, cell) => Boolean(cell.compareDocumentPosition(kp) & 4)"
            " && kp.getBoundingClientRect().top > cell.getBoundingClientRect().top",
            answer.element_handle(),
        )
        score = fg.locator(f"input#answer-{qid}")
        score.fill(points)
        with fg.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT") as saved:
            score.press("Tab")
        assert saved.value.ok and float(saved.value.json()["manual_score"]) == float(points)
    # the hint stands between Q1's score box and Q2's, all three read in one go (formgrader may still be scrolling)
    assert fg.evaluate("""() => { const top = (s) => document.querySelector(s).getBoundingClientRect().top;
        const hint = top("div.grader-hints"); return top("input#answer-Q1") < hint && hint < top("input#answer-Q2"); }""")  # noqa: E501
    fg.reload()  # the points were stored: formgrader shows them again
    for qid, points in POINTS.items():
        expect(fg.locator(f"input#answer-{qid}")).to_have_value(points)
    assert not grader.remote, "formgrader reached beyond 127.0.0.1"
    grader.close()

    # Feedback released; the student fetches it and reads the scores.
    instructor(hub, "generate_feedback", "lesson05")
    instructor(hub, "release_feedback", "lesson05")
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#submitted_assignments_list").get_by_role("button", name="Fetch Feedback").click()
    assert not student.remote and not teacher.remote, "JupyterLab reached beyond 127.0.0.1"
    page.locator("#submitted_assignments_list a", has_text="view feedback").click()  # the file browser goes there
    page.locator(".jp-DirListing-item", has_text="lesson05.html").dblclick()
    body = page.frame_locator(".jp-HTMLViewer iframe").locator("body")
    expect(body).to_contain_text("Score", timeout=60_000)
    text = body.inner_text()
    assert "lesson05 (Score: 7.5 / 10.0)" in text
    assert [f"Score: {float(p)} / 2.0" in text for p in POINTS.values()] == [True] * 3
    student.close()
