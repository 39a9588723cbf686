"""Formgrader as graders meet it: a real Jupyter server started in the course root, a submission opened in headless
Chromium. Beside the answers: the rubric's 要点, the veto hints and the code diagnoses; math typeset and diagrams
drawn from the course's own MathJax and mermaid; no request leaves loopback."""

from __future__ import annotations

import contextlib
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.loopback import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.sandbox, pytest.mark.waits]


@contextlib.contextmanager
def formgrader_server(course_root: Path, runtime: Path):
    """`jupyter server` with nbgrader's formgrader extension, started in COURSE_ROOT on 127.0.0.1; stopped after."""
    from course.workflows.grade import nbgrader_env

    port, token = free_port(), secrets.token_hex(16)
    log = (runtime / "server.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "server",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={course_root}",
        ],
        cwd=course_root,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**nbgrader_env(), "JUPYTER_RUNTIME_DIR": str(runtime)},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"jupyter server did not start:\n{(runtime / 'server.log').read_text()}")
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="module")
def formgrader(answered, tmp_path_factory):
    """Formgrader on the answered demo class."""
    with formgrader_server(answered, tmp_path_factory.mktemp("jupyter-runtime")) as served:
        yield served


def _submission_id(course_root: Path, student: str) -> str:
    """The id formgrader's URLs use for a student's lesson05 notebook, from the gradebook."""
    from course.grading.gradebook import configured_gradebook, gradebook

    with gradebook(configured_gradebook(course_root).url) as gb:
        return gb.find_submission_notebook("lesson05", "lesson05", student).id


@pytest.fixture(scope="module")
def wangwu_page(formgrader, answered, chromium):
    """wangwu's submission in formgrader, typeset and drawn; with every URL the page asked for and its JS errors."""
    base, token = formgrader
    requests, errors = [], []
    page = chromium.new_page()  # in a context of its own, closed with the page
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    # anything that is not this server fails at once instead of waiting on a closed network
    page.route(re.compile(r"^(?!http://127\.0\.0\.1:\d+/|data:|blob:)"), lambda route: route.abort())
    page.goto(f"{base}/formgrader/submissions/{_submission_id(answered, 'wangwu')}/?token={token}", timeout=120_000)
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=60_000)
    page.evaluate("() => MathJax.startup.promise")
    page.wait_for_function(
        "() => document.querySelectorAll('pre.mermaid').length > 0 && "
        "document.querySelectorAll('pre.mermaid').length === "
        "document.querySelectorAll('pre.mermaid svg').length",
        timeout=60_000,
    )
    yield page, requests, errors
    page.close()


def _follows(page, first: str, second: str) -> bool:
    """Whether the element SECOND comes after FIRST in the document."""
    return page.evaluate(
        "([a, b]) => !!(document.querySelector(a).compareDocumentPosition("
        "document.querySelector(b)) & Node.DOCUMENT_POSITION_FOLLOWING)",
        [first, second],
    )


def test_veto_hints_sit_beside_the_answer_they_come_from(wangwu_page):
    import yaml

    from course.hints.find import find_veto_hints
    from course.hints.vocabulary import lesson_vocabulary
    from tests.conftest import ROOT
    from tests.nbgrader_hooks.conftest import DEMO

    page, _, _ = wangwu_page
    answer = yaml.safe_load((DEMO / "students.yml").read_text("utf-8"))["wangwu"]["answers"]["Q1"]
    expected = find_veto_hints(answer, lesson_vocabulary(ROOT / "lessons", "lesson05"), question="Q1")
    assert "activation-shard" in {h.veto_id for h in expected}
    hints = page.locator("div.grader-hints")
    assert hints.count() == 1  # only Q1 of wangwu reads like a veto item
    text = hints.inner_text()
    assert "评分提示 · Q1" in text and "只供评分者参考，不是判定" in text
    for hint in expected:
        assert hint.veto_id in text and hint.sentence.replace("$", "")[:20] in text
    # below wangwu's Q1 answer (its score box), after Q1's 要点 and before the Q2 answer
    assert _follows(page, "#answer-Q1", "div.grader-hints")
    assert _follows(page, "div.rubric-key-points", "div.grader-hints")
    assert _follows(page, "div.grader-hints", "#answer-Q2")


def test_code_diagnosis_with_its_evidence_sits_beside_the_failed_code_item(wangwu_page, answered):
    import json

    page, _, _ = wangwu_page
    report = json.loads((answered / "reports" / "lesson05-grade.json").read_text("utf-8"))
    [diagnosis] = report["wangwu"]["verdicts"]["formulas"]["diagnoses"]
    shown = page.locator("div.code-diagnosis")
    assert shown.count() == 1 and shown.get_attribute("data-veto") == diagnosis["veto"] == "shard-target"
    text = shown.inner_text()
    assert diagnosis["name"] in text and "可能的一票否决项 shard-target" in text and "不是判定" in text
    assert "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000" in text  # the evidence: calls and values
    assert _follows(page, "#test-formulas", "div.code-diagnosis")
    assert _follows(page, "div.code-diagnosis", "#test-fp32-accum")


def test_math_is_typeset_and_diagrams_drawn_with_nothing_fetched_from_outside(wangwu_page, formgrader):
    page, requests, errors = wangwu_page
    base, _ = formgrader
    assert page.locator("mjx-container svg").count() > 20
    assert page.locator("mjx-merror").count() == 0
    assert "$N_d$" not in page.inner_text("body")
    assert page.locator("pre.mermaid svg text, pre.mermaid svg foreignObject").count() > 3
    assert page.evaluate("() => MathJax.loaded") is True  # formgrader's own script saw typesetting end
    outside = [u for u in requests if not u.startswith((base + "/", "data:", "blob:"))]
    assert requests and outside == []
    assert errors == []


def test_similarity_evidence_sits_beside_the_answer_with_the_spans_marked(answered, wangwu_page, tmp_path):
    """A copy of wangwu's notebook handed in by another student: wangwu's page shows the pair below the answers."""
    from course.workflows.similarity_report import write_similarity

    project = tmp_path / "class"
    shutil.copytree(answered.parent, project, symlinks=True)
    root = project / "autograder"
    [wangwu] = (root / "submitted" / "wangwu" / "lesson05").glob("*.ipynb")
    (root / "submitted" / "copycat" / "lesson05").mkdir(parents=True)
    shutil.copy(wangwu, root / "submitted" / "copycat" / "lesson05" / wangwu.name)
    result = write_similarity(project, "lesson05")
    assert [(p.a, p.b) for p in result.pairs][:1] == [("copycat", "wangwu")]
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    with formgrader_server(root, runtime) as (base, token):
        page = wangwu_page[0].context.browser.new_page()  # the module's Chromium: one Playwright per thread
        page.route(re.compile(r"^(?!http://127\.0\.0\.1:\d+/|data:|blob:)"), lambda route: route.abort())
        page.goto(f"{base}/formgrader/submissions/{_submission_id(root, 'wangwu')}/?token={token}", timeout=120_000)
        text = 'div.similarity-evidence[data-other="copycat"][data-kind="text"]'
        notes = page.locator(text)
        assert notes.count() >= 1
        assert "不是判定" in notes.first.inner_text() and notes.first.locator("mark").count() >= 1
        assert _follows(page, "#answer-Q1", text)  # below an answer (Q1 or later), not at the top of the page
        page.close()
