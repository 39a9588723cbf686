"""Grading: the rubric, graders' veto records and the per-student report."""
