"""The student notebooks in the students' real clients: JupyterLab 4 (the course's JupyterHub serves it) and
Notebook 7 show every image, attachments included, of each lesson's student notebooks.

A `jupyter lab` server runs on 127.0.0.1 with a token, in a throwaway folder holding copies of the student site's
notebooks, with its own config, runtime and settings folders (cells rendered all at once, no update or news checks);
Chromium opens each notebook there, every request off the loopback address is refused, and the server is stopped
at the end.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from tests.lesson_cases import each_lesson, has_assignment
from tests.loopback import free_port

pytestmark = [pytest.mark.long(21), pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def jupyterlab(built_site, tmp_path_factory):
    """(base URL, token, folder) of a running JupyterLab serving copies of the student site's notebooks."""
    home = tmp_path_factory.mktemp("jupyterlab")
    work = home / "work"
    work.mkdir()
    for path in (built_site / "student").glob("*.ipynb"):
        shutil.copy(path, work / path.name)
    settings = home / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}), "utf-8")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            "--allow-root",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={work}",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=(home / "server.log").open("wb"),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "jupyter lab did not start:\n" + (home / "server.log").read_text("utf-8")[-3000:]
                    )
                time.sleep(0.5)
        yield base, token, work
    finally:
        _stop(server)


def _stop(server: subprocess.Popen) -> None:
    """Stop the server and the kernels it started (its own process group), forcibly if it does not go in 30 s."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
    server.wait()


def _images_in_client(browser, url: str, base: str, expected: int) -> tuple[list, list]:
    """Each image the client at URL shows in its notebook as (src start, loaded), once EXPECTED appeared; console
    errors."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith((base, "data:", "blob:")) else route.abort(),
    )
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_selector(".jp-NotebookPanel .jp-MarkdownCell", timeout=90_000)
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownOutput img').length >= n",
        arg=expected,
        timeout=60_000,
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownOutput img')].every(i => i.complete)",
        timeout=30_000,
    )
    images = page.evaluate(
        "() => [...document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownOutput img')]"
        ".map(i => [(i.getAttribute('src') || '').slice(0, 40), i.naturalWidth > 0])"
    )
    page.close()
    return images, errors


def _attachment_images(path: Path) -> int:
    """How many images the notebook's markdown cells show from their attachments."""
    nb = nbformat.read(path, as_version=4)
    return sum(c.source.count("](attachment:") for c in nb.cells if c.cell_type == "markdown")


@each_lesson
@pytest.mark.parametrize("client", ["lab/tree", "notebooks"])  # JupyterLab 4 and Notebook 7, on the same server
def test_the_client_shows_every_image_of_the_students_notebooks(jupyterlab, browser, client, stem):
    base, token, work = jupyterlab
    names = [notes_notebook(stem)] + ([assignment_notebook(stem)] if has_assignment(stem) else [])
    for name in names:
        expected = _attachment_images(work / name)
        images, errors = _images_in_client(browser, f"{base}/{client}/{name}?token={token}", base, expected)
        assert len(images) >= expected and not [src for src, loaded in images if not loaded], name
        assert not [e for e in errors if "mime type" in e], name
