"""What `make setup` leaves in the course's environment (Makefile): the packages every process pays for at start."""

from __future__ import annotations

import subprocess
import sys


def test_jsonschema_starts_without_the_unused_iri_grammars():
    """A kernel, notebook runner, Jupyter server or Quarto hook imports jsonschema without building the IRI
    grammars nothing in the course validates (about 1.7 CPU-s a process): `make setup` removes rfc3987-syntax."""
    code = (
        "import sys, jsonschema, nbformat; "
        "print('rfc3987_syntax' in sys.modules, 'iri' in jsonschema.FormatChecker().checkers)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert shown == ["False", "False"]
