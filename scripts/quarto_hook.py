"""Quarto's pre-render and post-render scripts for this course (_quarto.yml): the course's own steps, by its code."""

import sys

try:
    from course.workflows.quarto_hooks import main
except ImportError:
    sys.exit(
        "the course package is not importable by this Python; render with the course's Python: "
        "QUARTO_PYTHON=$PWD/.venv/bin/python quarto render --profile student (run `make` to create .venv)"
    )

sys.exit(main(sys.argv[1:]))
