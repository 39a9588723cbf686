"""The grading tests' shared classes as fixtures: a gradebook with the demo class (tests/grading/report_class.py) and
a semester of two lessons (tests/grading/semester_class.py), on SQLite and PostgreSQL."""

from tests.grading.report_class import course, empty_gradebook  # noqa: F401 (fixtures)
from tests.grading.semester_class import filled_semesters, semester  # noqa: F401 (fixtures)
