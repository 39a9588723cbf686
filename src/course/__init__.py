"""Courseware tooling: one lesson source becomes student and answer sites, nbgrader assignments and reports."""

__version__ = "0.1.0"
