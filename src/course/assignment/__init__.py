"""The nbgrader assignments: source notebooks generated from the lessons, their checks, and nbgrader hooks."""
