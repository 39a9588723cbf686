"""Hints for graders: a rule-based reader of short answers that points at sentences looking like a veto item."""
