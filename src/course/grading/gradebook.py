"""Open nbgrader's gradebook the one way the course does: from a file path or a URL, quietly."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def gradebook(path: Path | str) -> Iterator:
    """nbgrader's Gradebook, without the SQLAlchemy warnings its own add_submission raises when creating rows."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        with Gradebook(db_url(path)) as gb:
            yield gb


def db_url(gradebook: Path | str) -> str:
    """An SQLAlchemy URL for a gradebook given as a file path or already as a URL."""
    text = str(gradebook)
    return text if "://" in text else f"sqlite:///{Path(text).resolve()}"
