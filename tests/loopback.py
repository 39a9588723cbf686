"""What the server-starting tests share: free ports on the loopback address and a static file server there (they
never bind elsewhere)."""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    return free_ports(1)


def free_ports(count: int) -> int:
    """A port P on 127.0.0.1 with P..P+COUNT-1 free (a server that takes several ports in a row)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((HOST, 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(_port_free(base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no {count} free ports in a row on {HOST}")


def _port_free(port: int) -> bool:
    """Whether PORT on 127.0.0.1 can be bound now."""
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


class _Quiet(SimpleHTTPRequestHandler):
    """A static file server that does not log every request on the test's output."""

    def log_message(self, *args):
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """FOLDER over HTTP on a port of its own (so an origin, and browser storage, of its own); its base URL, without
    a trailing slash; the server stopped afterwards."""
    server = ThreadingHTTPServer((HOST, 0), functools.partial(_Quiet, directory=str(folder)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{HOST}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
