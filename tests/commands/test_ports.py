"""`--port` of `course preview` and `course hub`: a port out of range, or no number, is a usage error saying the
range (exit 2, before anything is built or started); one in range is taken as given."""

from __future__ import annotations

import pytest

from course.cli import _parser, main


@pytest.mark.parametrize(
    ("command", "port", "expected"),
    [
        ("preview", "99999", "from 0 to 65535, got '99999'"),
        ("preview", "-5", "from 0 to 65535, got '-5'"),
        ("preview", "eighty", "from 0 to 65535, got 'eighty'"),
        ("hub", "0", "from 1 to 65532, got '0'"),  # the hub's port and the next three
        ("hub", "65533", "from 1 to 65532, got '65533'"),
    ],
)
def test_a_port_out_of_range_is_a_usage_error_saying_the_range(command, port, expected, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([command, f"--port={port}"])
    assert stopped.value.code == 2
    assert f"course {command}: error: argument --port: expected a port number {expected}" in capsys.readouterr().err


@pytest.mark.parametrize(("command", "port"), [("preview", "0"), ("preview", "65535"), ("hub", "65532"), ("hub", "1")])
def test_a_port_in_range_is_taken_as_given(command, port):
    assert _parser(command).parse_args([command, "--port", port]).port == int(port)
