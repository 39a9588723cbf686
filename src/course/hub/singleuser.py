"""Each account's Jupyter server on the hub, and the course's shared one: JupyterHub's `jupyterhub-singleuser`,
started without jsonschema's IRI checker, which no Jupyter, nbgrader or course schema uses and whose grammars cost
a CPU-second or two at every server start (course.skip_unused_iri_checker)."""

from __future__ import annotations

import sys


def main() -> int:
    """Run `jupyterhub-singleuser` with the arguments and environment the spawner gave."""
    from course import skip_unused_iri_checker

    skip_unused_iri_checker()
    from jupyterhub.singleuser import main as singleuser

    return singleuser()


if __name__ == "__main__":
    sys.exit(main())
