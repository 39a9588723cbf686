"""bubblewrap (bwrap), the sandbox `course grade` runs student notebooks in.

The sandbox sees the system read-only (/usr and a few /etc files), the Python installation read-only, a
sized tmpfs for the submission's working directory, /tmp and /dev/shm, and nothing of the course root or
the project checkout. It has its own user, pid, network, ipc, uts and cgroup namespaces (so no network at
all), no capabilities, and cannot create further user namespaces.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from course.errors import ToolMissing

INSTALL_HINT = "apt-get install bubblewrap"
UNSAFE_HINT = "or run `course grade --unsafe` to grade without a sandbox (only for submissions you trust)"

# The user the submission runs as inside the sandbox ("nobody"); it owns nothing on the host.
SANDBOX_UID = 65534

# Top-level system paths that are either symlinks into /usr (merged-/usr systems) or real directories.
_SYSTEM_TOPS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# The /etc files a Python kernel uses: user names (getpass, pwd), localhost, time zone, the loader
# cache, fonts for matplotlib, and Debian's alternatives symlinks. Nothing else of /etc is shown.
_ETC_FILES = (
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/localtime",
    "/etc/ld.so.cache",
    "/etc/fonts",
    "/etc/alternatives",
)


class SandboxUnavailable(ToolMissing):
    """bwrap is installed but cannot build a working sandbox on this machine."""


@dataclass(frozen=True)
class SandboxLayout:
    """What one sandbox shows and how it starts: read-only host paths, the work area, the environment."""

    readonly: tuple[Path, ...]
    work_dir: str
    work_files: tuple[Path, ...] = ()
    tmpfs_bytes: int = 256 * 2**20
    env: Mapping[str, str] = field(default_factory=dict)


def find_bwrap() -> Path:
    """The bwrap binary, or a ToolMissing saying how to install it and how to grade without it."""
    path = shutil.which("bwrap")
    if not path:
        raise ToolMissing(
            "bubblewrap (bwrap) is not installed; `course grade` runs student code inside it. "
            f"Install it with `{INSTALL_HINT}`, {UNSAFE_HINT}."
        )
    return Path(path)


def python_install_paths() -> tuple[Path, ...]:
    """The directories the running Python needs: its prefix (the venv) and the base interpreter's."""
    candidates = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    candidates.add(Path(sys.executable).resolve().parent.parent)
    return _outermost(candidates)


def _outermost(paths: set[Path]) -> tuple[Path, ...]:
    """Drop paths inside other paths of the set (binding the outer one shows them already)."""
    ordered = sorted(paths, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in ordered:
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return tuple(kept)


def _system_args() -> list[str]:
    """Read-only /usr, the top-level lib/bin links (or dirs), and the few /etc files a kernel needs."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _SYSTEM_TOPS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in _ETC_FILES:
        args += ["--ro-bind-try", etc, etc]
    return args


def _readonly_args(paths: Sequence[Path]) -> list[str]:
    """Read-only binds of host paths at the same place, skipping those /usr already shows."""
    args: list[str] = []
    for path in paths:
        if path == Path("/usr") or Path("/usr") in path.parents:
            continue
        args += ["--ro-bind", str(path), str(path)]
    return args


def bwrap_argv(bwrap: Path, layout: SandboxLayout, command: Sequence[str]) -> list[str]:
    """The full bwrap command line that runs COMMAND inside the sandbox LAYOUT describes."""
    size = str(layout.tmpfs_bytes)
    args = [
        str(bwrap),
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        # The command is pid 1: nothing else in the sandbox holds its stdout, and signals sent from inside
        # (kill(ppid), kill(-1)) cannot kill a namespace's init.
        "--as-pid-1",
        "--new-session",
        "--clearenv",
        *_system_args(),
        # procfs read-only: as root, the sandbox user maps to host uid 0 and could otherwise write sysctls.
        "--proc",
        "/proc",
        "--remount-ro",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        "--size",
        size,
        "--tmpfs",
        layout.work_dir,
        # After the tmpfs mounts, so that a Python installed under /tmp stays visible.
        *_readonly_args(layout.readonly),
    ]
    for path in layout.work_files:
        args += ["--ro-bind", str(path), f"{layout.work_dir}/{path.name}"]
    # The sandbox's own root tmpfs is unbounded; nothing needs to write there once the mounts exist.
    args += ["--remount-ro", "/", "--chdir", layout.work_dir]
    for key, value in layout.env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *command]


@functools.cache
def probe_bwrap(bwrap: Path, python: str) -> None:
    """Check once that bwrap can build the grading sandbox here and run PYTHON in it; raise if not."""
    layout = SandboxLayout(readonly=python_install_paths(), work_dir="/submission", tmpfs_bytes=2**20)
    argv = bwrap_argv(bwrap, layout, [python, "-I", "-c", "pass"])
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bubblewrap at {bwrap} could not start a sandbox: {exc}; {UNSAFE_HINT}") from exc
    if proc.returncode != 0:
        raise SandboxUnavailable(
            f"bubblewrap at {bwrap} cannot build a sandbox on this machine ({proc.stderr.strip() or proc.returncode}); "
            "it needs user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
            f"user.max_user_namespaces > 0); {UNSAFE_HINT}"
        )
