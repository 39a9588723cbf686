"""The similarity tests' planted class, graded (tests/similarity/planted_class.py), as the `graded` fixture here."""

from tests.similarity.planted_class import graded  # noqa: F401 (a fixture)
