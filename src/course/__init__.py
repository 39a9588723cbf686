"""Courseware tooling: one lesson source becomes student and answer sites, nbgrader assignments and reports."""

import sys

__version__ = "0.1.0"


def skip_unused_iri_checker() -> None:
    """Keep jsonschema (imported by nbformat) from importing its optional IRI checker, rfc3987_syntax: building that
    checker's grammars costs about a second of CPU in every process that reads a notebook, and no notebook, nbgrader
    or course schema uses the iri formats. Call it before nbformat is first imported."""
    sys.modules.setdefault("rfc3987_syntax", None)
