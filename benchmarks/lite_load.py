"""What running the lesson in the browser costs: the cold load of the student site's JupyterLite and the site size.

Builds the course (a no-op when up to date), serves the student site on a loopback HTTP server that counts what it
sends, and opens each lesson's in-browser notebook (the page's "在浏览器中运行" link target) in headless Chromium
with a fresh profile per round (nothing cached), every request off the machine aborted. It clicks Run All at once
and prints, per round and as medians: the requests and bytes the server sent until the kernel had run the first
cell, the seconds to the notebook's cells on screen and to that first run (the kernel ready: Pyodide and IPython
loaded); then the same in the same profile again (warm: the browser's cache). Last, the size lite/ adds to each
variant's site, how much of it is the Pyodide runtime (one per site, shared by every lesson) and the notebooks.

    .venv/bin/python benchmarks/lite_load.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


class Counting(SimpleHTTPRequestHandler):
    """Serves the site and adds every request and body byte it sends to the server's counters."""

    def copyfile(self, source, outputfile):
        data = source.read()
        outputfile.write(data)
        with self.server.lock:
            self.server.sent += len(data)

    def send_response(self, code, message=None):
        with self.server.lock:
            self.server.requests += 1
        super().send_response(code, message)

    def log_message(self, *args):
        pass


def serve(site: Path) -> ThreadingHTTPServer:
    """The counting server on 127.0.0.1, running in a thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Counting, directory=str(site)))
    server.daemon_threads, server.lock, server.sent, server.requests = True, threading.Lock(), 0, 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def load(context, server, url: str) -> dict:
    """Open URL in a new page, Run All at once; the counts and seconds until the first cell has run."""
    page = context.new_page()
    base = f"http://127.0.0.1:{server.server_port}/"
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith((base, "data:", "blob:")) else route.abort(),
    )
    server.sent = server.requests = 0
    start = time.perf_counter()
    page.goto(base + url)
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=120_000)
    shown = time.perf_counter() - start
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator("li[data-command='runmenu:run-all']").click()
    page.wait_for_function(
        "() => /\\[1\\]/.test(document.querySelector('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt').innerText)",
        timeout=300_000,
    )
    ready = time.perf_counter() - start
    result = {"requests": server.requests, "bytes": server.sent, "shown": shown, "ready": ready}
    page.close()
    return result


def size(folder: Path) -> tuple[int, int]:
    """Bytes and files under FOLDER."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    """Print the cold and warm loads per lesson and round, their medians, then the sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from course.tools.chromium import launch_chromium
    from course.workflows.build_site import build_course

    build_course(ROOT)
    site = ROOT / "_site" / "student"
    notebooks = sorted(p.name for p in (site / "lite" / "files").glob("*.ipynb"))
    server = serve(site)
    for name in notebooks:
        url = f"lite/notebooks/index.html?path={name}"
        cold, warm = [], []
        for n in range(args.rounds):
            with launch_chromium() as context:  # a fresh profile: nothing cached
                cold.append(load(context, server, url))
                warm.append(load(context, server, url))
            for label, r in (("cold", cold[-1]), ("warm", warm[-1])):
                print(
                    f"{name} round {n + 1} {label}: {r['requests']} requests, {r['bytes'] / 1e6:.1f} MB, cells "
                    f"shown {r['shown']:.1f} s, kernel ready (first cell run) {r['ready']:.1f} s"
                )
        for label, rows in (("cold", cold), ("warm", warm)):
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(
                f"{name} median {label} of {args.rounds}: "
                f"{med['requests']:.0f} requests, {med['bytes'] / 1e6:.1f} MB, "
                f"cells shown {med['shown']:.1f} s, kernel ready {med['ready']:.1f} s"
            )
    server.shutdown()
    for variant in ("student", "answer"):
        whole, _ = size(ROOT / "_site" / variant)
        lite, files = size(ROOT / "_site" / variant / "lite")
        runtime, _ = size(ROOT / "_site" / variant / "lite" / "static" / "pyodide")
        contents, _ = size(ROOT / "_site" / variant / "lite" / "files")
        print(
            f"{variant}: lite/ adds {lite / 1e6:.1f} MB in {files} files to a {(whole - lite) / 1e6:.1f} MB site "
            f"(Pyodide runtime and wheels {runtime / 1e6:.1f} MB, once for all lessons; notebooks "
            f"{contents / 1e6:.2f} MB)"
        )


if __name__ == "__main__":
    main()
