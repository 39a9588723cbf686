"""Serve a built site on the loopback address for `course preview`, each page served with a reload script added.

The script (preview_reload.js) is added to the response only, never to the built files: it asks the version
endpoint every half second and reloads the page when a rebuild has changed the number. Plain polling keeps this the
standard library's threaded HTTP server: no connection stays open, so stopping it never waits on a browser.
(livereload from PyPI would bring tornado and its own watcher and build loop; the course has watchfiles and
build_course already, and needs only the version number.)
"""

from __future__ import annotations

import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path

from course.errors import CourseError

HOST = "127.0.0.1"  # loopback only: a preview is for the author at this machine
VERSION_PATH = "/__course_preview__/version"


class PreviewServer:
    """The site folder served on HOST:PORT in a background thread, with the site's version (bumped per rebuild)."""

    def __init__(self, site: Path, port: int):
        handler = partial(_PreviewHandler, directory=str(site))
        try:
            self.httpd = _PreviewHTTPServer((HOST, port), handler)
        except OSError as exc:
            raise CourseError(
                f"cannot listen on {HOST}:{port} ({exc.strerror}); choose another port with --port (0 picks a free one)"
            ) from None
        self.httpd.daemon_threads = True
        self.httpd.site_version = 0
        self.httpd.reload_script = resources.files("course").joinpath("site/preview_reload.js").read_text("utf-8")
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="course-preview", daemon=True)

    @property
    def url(self) -> str:
        """Where the site is served, e.g. http://127.0.0.1:8000/."""
        return f"http://{HOST}:{self.httpd.server_address[1]}/"

    def reload(self) -> None:
        """Tell the open pages that the site changed: they reload themselves."""
        self.httpd.site_version += 1

    def __enter__(self) -> PreviewServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()


class _PreviewHTTPServer(ThreadingHTTPServer):
    """The standard threaded server, quiet when a browser leaves before a file is sent: a page reloaded or closed
    while a large file (mermaid, Pyodide) was on its way is no error of the author's, and its traceback would
    bury the build messages `course preview` prints."""

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset by the browser, or a pipe it closed
            return
        super().handle_error(request, client_address)


def _in_lite(path: Path, site: Path) -> bool:
    """Whether PATH is a page of the site's JupyterLite (lite/): never reloaded under a student's unsaved work."""
    return path.resolve().is_relative_to((site / "lite").resolve())


class _PreviewHandler(SimpleHTTPRequestHandler):
    """Files of the site as they are, except pages (the reload script added) and the version endpoint."""

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == VERSION_PATH:
            return self._send(str(self.server.site_version).encode(), "text/plain; charset=utf-8")
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?", 1)[0].endswith("/"):
            path = path / "index.html"
        if path.suffix != ".html" or not path.is_file() or _in_lite(path, Path(self.directory)):
            return super().do_GET()  # files as they are; a folder without its "/" is redirected
        script = self.server.reload_script.replace("__VERSION__", str(self.server.site_version))
        try:
            page = path.read_text("utf-8")
        except OSError:  # the site was being replaced by a rebuild at this instant
            return self.send_error(404)
        at = page.rfind("</body>")
        at = len(page) if at < 0 else at
        self._send((page[:at] + f"<script>\n{script}</script>\n" + page[at:]).encode(), "text/html; charset=utf-8")

    def _send(self, body: bytes, content_type: str) -> None:
        """One complete response."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        """Never cached: after a rebuild the browser must fetch the new files."""
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        """Requests are not logged: the preview's output is its builds."""
