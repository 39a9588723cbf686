"""Run a command as if some closed folders let other accounts pass through (o+x), changing no folder's mode.

The command runs (as root, before it drops to an account with `runuser`) in a private mount namespace of its own
where each closed folder is covered by a tmpfs of the folder's owner and mode plus o+x, holding bind mounts of the
folder's entries: other accounts see what `chmod o+x` would show them, and the machine's folders keep their modes.
Mounts made there end with the command. Run as a script: `python open_view.py FOLDER... -- COMMAND...`.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

MS_BIND, MS_REC = 4096, 16384


def in_open_view(argv: Sequence[str], folders: Iterable[Path]) -> list[str]:
    """ARGV, to be run as root, seeing each of FOLDERS open to others (ARGV itself when none is closed)."""
    folders = sorted(set(folders))
    if not folders:
        return list(argv)
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        sys.executable,
        __file__,
        *map(str, folders),
        "--",
        *argv,
    ]


def _mount(source: str, target: Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if (
        libc.mount(source.encode(), str(target).encode(), fstype and fstype.encode(), flags, data and data.encode())
        != 0
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def open_view(folder: Path) -> None:
    """Cover FOLDER with a tmpfs others may pass through, each of its entries bound back in (in this namespace)."""
    info = folder.stat()
    real = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # the folder itself, still reachable once covered
    try:
        mode = stat.S_IMODE(info.st_mode) | stat.S_IXOTH
        _mount("tmpfs", folder, "tmpfs", 0, f"mode={mode:o},uid={info.st_uid},gid={info.st_gid}")
        for name in os.listdir(real):
            entry, target = os.stat(name, dir_fd=real, follow_symlinks=False), folder / name
            if stat.S_ISLNK(entry.st_mode):
                target.symlink_to(os.readlink(name, dir_fd=real))
                continue
            if stat.S_ISDIR(entry.st_mode):
                target.mkdir()
            else:
                target.touch()
            _mount(f"/proc/self/fd/{real}/{name}", target, None, MS_BIND | MS_REC)
    finally:
        os.close(real)


def main(args: list[str]) -> None:
    """Open each folder before `--` (parents first), then become the command after it."""
    split = args.index("--")
    for folder in sorted(map(Path, args[:split])):
        open_view(folder)
    command = args[split + 1 :]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
