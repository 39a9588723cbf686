"""The preview server: pages get the reload script in the response only, other files are served as they are, the
version endpoint counts rebuilds, nothing is cached, and a port in use is a clear error."""

from __future__ import annotations

import socket
import struct
import threading
import time
import urllib.request

import pytest

from course.errors import CourseError
from course.site.serve_preview import VERSION_PATH, PreviewServer
from tests.loopback import free_port

PAGE = "<html><body><p>第 1 课</p></body></html>"


def fetch(url: str) -> tuple[bytes, dict]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read(), dict(response.headers)


def test_pages_get_the_reload_script_and_other_files_are_served_as_built(tmp_path):
    (tmp_path / "index.html").write_text(PAGE, "utf-8")
    (tmp_path / "site_libs").mkdir()
    (tmp_path / "site_libs" / "course.css").write_text("body { color: black; }", "utf-8")
    with PreviewServer(tmp_path, free_port()) as server:
        page, headers = fetch(server.url)
        assert page.decode("utf-8").startswith("<html><body><p>第 1 课</p><script>")
        assert f'"{VERSION_PATH}"' in page.decode("utf-8") and 'const served = "0"' in page.decode("utf-8")
        assert headers["Cache-Control"] == "no-store"
        assert fetch(server.url + "site_libs/course.css")[0] == b"body { color: black; }"
        assert fetch(server.url + VERSION_PATH.lstrip("/"))[0] == b"0"
        server.reload()
        assert fetch(server.url + VERSION_PATH.lstrip("/"))[0] == b"1"
        assert 'const served = "1"' in fetch(server.url + "index.html")[0].decode("utf-8")
    assert (tmp_path / "index.html").read_text("utf-8") == PAGE  # the built file never changes


def test_the_in_browser_notebooks_pages_are_served_without_the_reload_script(tmp_path):
    """A rebuild must not reload JupyterLite (lite/) under a notebook's unsaved edits."""
    (tmp_path / "lite" / "notebooks").mkdir(parents=True)
    (tmp_path / "lite" / "notebooks" / "index.html").write_text(PAGE, "utf-8")
    with PreviewServer(tmp_path, free_port()) as server:
        assert fetch(server.url + "lite/notebooks/index.html?path=lesson01.ipynb")[0].decode("utf-8") == PAGE
        assert fetch(server.url + "lite/notebooks/")[0].decode("utf-8") == PAGE


def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CourseError, match=rf"cannot listen on 127.0.0.1:{port} .*--port \(0 picks a free one\)"):
            PreviewServer(tmp_path, port)


def test_a_browser_leaving_mid_file_prints_nothing_and_the_server_goes_on(tmp_path, capfd):
    """A reload while a large file is on its way resets the connection: no traceback in the author's terminal."""
    (tmp_path / "big.js").write_bytes(b"x" * (32 << 20))
    (tmp_path / "index.html").write_text(PAGE, "utf-8")
    with PreviewServer(tmp_path, free_port()) as server:
        for _ in range(3):
            with socket.create_connection(server.httpd.server_address, timeout=5) as client:
                client.sendall(b"GET /big.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert client.recv(4096).startswith(b"HTTP/1.0 200")
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        deadline = time.monotonic() + 10
        while any("process_request" in t.name for t in threading.enumerate()) and time.monotonic() < deadline:
            time.sleep(0.05)  # until every request's thread has met the reset
        assert fetch(server.url)[0].decode("utf-8").startswith("<html><body><p>第 1 课</p>")
    assert "Traceback" not in capfd.readouterr().err
