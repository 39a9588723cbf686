"""Writes that never leave a half-written file or folder behind."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    """The process umask (reading it means setting it, so set it straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write next to PATH, then rename over it: readers see the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:  # Ctrl-C may land after the rename, when there is nothing left to remove
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def replace_dir_atomically(target: Path) -> Iterator[Path]:
    """Yield a fresh sibling folder; on success it replaces TARGET, on error it is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.building-"))
    staging.chmod(0o777 & ~_umask())
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)


def once_per_version(load):
    """LOAD(path, *args), remembered per version of the file (path, modification time, size): a grading run reads
    the same rubric and checks for every student. What LOAD returns is shared, so it must be left unchanged."""

    @functools.lru_cache(maxsize=16)
    def version(path: Path, mtime_ns: int, size: int, *args):
        return load(path, *args)

    @functools.wraps(load)
    def read(path, *args):
        stat = Path(path).stat()
        return version(Path(path), stat.st_mtime_ns, stat.st_size, *args)

    return read


@functools.cache
def _file_lock(path: str):
    """One lock object per lock file in this process, so a holder may take it again (a build draws figures)."""
    from filelock import FileLock

    return FileLock(path)


@contextmanager
def project_lock(cache_dir: Path, *, what: str) -> Iterator[None]:
    """Hold the project's lock while WHAT writes its generated files: a second `course build` (or a preview, or a
    test worker) waits for the first instead of interleaving writes to the same site, cache and figures."""
    from filelock import Timeout

    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    lock = _file_lock(str(Path(cache_dir).resolve() / "project.lock"))
    try:
        lock.acquire(timeout=1)
    except Timeout:
        print(f"{what}: waiting for another build of this project to finish", flush=True)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def link_or_copy(src: Path, dst: Path) -> None:
    """Put SRC at DST (replacing what is there) as a hard link, one copy on disk, or a copy across file systems."""
    dst = Path(dst)
    temporary = dst.with_name(f".{dst.name}.new")
    temporary.unlink(missing_ok=True)
    try:
        os.link(src, temporary)
    except OSError:
        shutil.copyfile(src, temporary)
    os.replace(temporary, dst)
