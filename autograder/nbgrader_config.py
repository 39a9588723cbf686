# nbgrader configuration of the course: this folder (autograder/) is the nbgrader course root.
# Run nbgrader commands from here, e.g. `nbgrader generate_assignment lesson05`. The settings themselves
# live in the course package (course.assignment.nbgrader_setup), installed with `pip install -e .`.
from pathlib import Path

from course.assignment.nbgrader_setup import configure

configure(get_config(), Path(__file__).resolve().parent)  # noqa: F821 (nbgrader provides get_config)
