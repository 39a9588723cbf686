# JupyterHub configuration of the course (nbgrader with one course, instructors and graders, as nbgrader's
# documentation describes for a hub). `course hub` starts it for a local trial; on a server run
# `jupyterhub -f hub/jupyterhub_config.py` as root from the project's .venv. The settings are in
# course.hub.config (CourseHub); set them here, e.g.:
#   c.CourseHub.roster = "/srv/course/roster.yml"          # accounts per role (default: hub/roster.yml)
#   c.CourseHub.exchange_root = "/srv/nbgrader/exchange"    # default: .course-hub/exchange
#   c.CourseHub.port = 8000                                # the hub listens on 127.0.0.1 only
from pathlib import Path

from course.hub.config import configure_hub

configure_hub(get_config(), Path(__file__).resolve().parents[1])  # noqa: F821 (JupyterHub provides get_config)
