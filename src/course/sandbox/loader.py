"""The program the grading sandbox starts (`python -I -c`): the runner's modules come as source text.

The sandbox cannot import the course package (and a submission's `import course` must keep failing there), so
the first argument is a JSON object mapping each runner module's short name (runner, frames, …) to its source.
They are imported from memory as the package PACKAGE, whose modules import each other relatively, as they do as
course.sandbox in the grading process; then its runner runs with the remaining argument, its config. Only the
standard library.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import linecache
import os
import sys

PACKAGE = "course_sandbox"  # so course.sandbox.shell's tracebacks name course_sandbox_shell.py, as they always have


class SourceModules:
    """An import hook for PACKAGE (empty) and its modules, given as source text."""

    def __init__(self, sources: dict[str, str]):
        self.sources = {PACKAGE: "", **{f"{PACKAGE}.{name}": source for name, source in sources.items()}}

    def find_spec(self, name: str, path=None, target=None):
        """A spec for PACKAGE or one of its modules; None for anything else."""
        if name not in self.sources:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=name == PACKAGE)

    def create_module(self, spec):
        """The default module object."""
        return None

    def exec_module(self, module) -> None:
        """Run the module's source in it, keeping its lines for tracebacks."""
        source = self.sources[module.__name__]
        filename = module.__name__.replace(".", "_") + ".py"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), module.__dict__)


def main(argv: list[str]) -> int:
    """Make the modules of ARGV[1] importable, then run the runner with the rest of ARGV."""
    sys.meta_path.insert(0, SourceModules(json.loads(argv.pop(1))))
    return importlib.import_module(f"{PACKAGE}.runner").main(argv)


if __name__ == "__main__":
    status = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # no waiting for threads or atexit hooks the student's code may have left behind
