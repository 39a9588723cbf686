"""Every nbgrader hook of the course in one place: the configuration autograder/nbgrader_config.py applies, and the
preprocessors it registers."""
