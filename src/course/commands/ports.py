"""The `--port` of the commands that serve on the loopback address (`course preview`, `course hub`): a number
argparse checks, so a port out of range is a usage error that says the range, not a traceback from bind()."""

from __future__ import annotations

import argparse
from collections.abc import Callable

HIGHEST_PORT = 65535


def port_number(lowest: int = 0, ports: int = 1) -> Callable[[str], int]:
    """An argparse type: a port from LOWEST up to the highest that leaves room for PORTS consecutive ones."""
    highest = HIGHEST_PORT - (ports - 1)

    def port(text: str) -> int:
        """TEXT as a port number in range, else the usage error naming the range."""
        if not (text.isascii() and text.isdigit() and lowest <= int(text) <= highest):
            raise argparse.ArgumentTypeError(f"expected a port number from {lowest} to {highest}, got {text!r}")
        return int(text)

    return port
