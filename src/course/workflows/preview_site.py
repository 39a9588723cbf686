"""`course preview`: build one variant's site, serve it on 127.0.0.1, and rebuild it whenever a build input changes;
the open page reloads itself after each rebuild.

watchfiles (a maintained file watcher; inotify on Linux) reports the changed files in batches; each batch runs one
build_course of the served variant, which rebuilds only the lessons whose inputs changed (course.site.fingerprint).
A failed build prints its located error and leaves the last good site served: a build replaces the site only when
every step succeeded. Ctrl-C stops the watcher and the server (the KeyboardInterrupt ends the command).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from course.errors import CourseError
from course.lesson.variants import Variant, get_variant
from course.site.fingerprint import generated_assets, written_among_inputs
from course.site.plan import BuildPlan, make_plan
from course.site.serve_preview import PreviewServer

if TYPE_CHECKING:
    from course.workflows.build_site import BuildResult


QUIET_MS = 2000  # edits paused this long: release the assignments the quick rebuilds left unreleased


def preview(root: Path, *, variant: str | Variant | None = None, port: int = 8000) -> None:
    """Serve ROOT's VARIANT site (default: the first of [tool.course] variants) on 127.0.0.1:PORT and keep it built
    until interrupted."""
    import watchfiles

    plan = make_plan(root)
    variant = get_variant(variant) if variant else plan.variants[0]
    built = rebuild(plan.root, variant, release=False)
    unreleased = bool(built and built.unreleased)
    with PreviewServer(plan.site_dir(variant), port) as server:
        say(f"serving the {variant} site at {server.url} (Ctrl-C stops)")
        try:
            for changes in watchfiles.watch(
                *watched_paths(plan),
                watch_filter=InputFilter(plan),
                rust_timeout=QUIET_MS,
                yield_on_timeout=True,
                raise_interrupt=True,
            ):
                if changes:
                    say(f"changed: {', '.join(sorted({_shown(plan, path) for _, path in changes}))}")
                    built = rebuild(plan.root, variant, release=False)
                elif unreleased:
                    built = rebuild(plan.root, variant, release=True)
                else:
                    continue
                unreleased = bool(built and built.unreleased)
                if built and not built.up_to_date:
                    server.reload()
        except KeyboardInterrupt:
            say("stopped")
            raise


def rebuild(root: Path, variant: str | Variant, *, release: bool) -> BuildResult | None:
    """Build VARIANT and say which lessons were rebuilt; the BuildResult, or None when a CourseError was printed.

    Without RELEASE the rebuilt lessons' assignments (stock nbgrader, seconds each) wait until the edits pause."""
    from course.workflows.build_site import build_course

    start = time.perf_counter()
    try:
        # pandoc, whatever [tool.course] renderer says: it rebuilds only the edited lesson (Quarto, the whole site)
        result = build_course(root, variants=[str(variant)], release=release, renderer="pandoc")
    except CourseError as exc:
        say(f"{exc}\n  (still serving the last good site; save a fix to rebuild)", error=True)
        return None
    if result.up_to_date:
        say(f"up to date ({time.perf_counter() - start:.2f} s)")
        return result
    stems = result.rebuilt.get(str(variant), [])
    later = f"; assignment of {', '.join(result.unreleased)} released when the edits pause" if result.unreleased else ""
    done = "released the assignments and " if release else ""
    say(
        f"{done}rebuilt {', '.join(stems)} ({len(stems)} of {len(result.lessons)} lesson(s)) "
        f"in {time.perf_counter() - start:.2f} s{later}"
    )
    return result


def watched_paths(plan: BuildPlan) -> list[Path]:
    """The inputs of a pandoc build that exist (lessons, their data, solutions, assets, rubrics, settings, the
    filter); Quarto's own project files are not among them."""
    from course.workflows.render_pandoc import pandoc_inputs

    names = [*plan.config.build_inputs, *pandoc_inputs(plan)]
    return [path for name in names if (path := plan.root / name).exists()]


class InputFilter:
    """Changes worth a build: watchfiles' defaults (no editor swap files, caches, .git) and no generated asset,
    half-written temporary file (course.fileio.write_atomic's .NAME.XXXX.tmp) or file a `quarto render` in the same
    checkout writes beside the lesson it renders (whose rebuilds would replace the site under Quarto's output)."""

    TEMPORARY = re.compile(r"^\..+\.tmp$")

    def __init__(self, plan: BuildPlan):
        import watchfiles

        self._default = watchfiles.DefaultFilter()
        self._generated = generated_assets(plan)

    def __call__(self, change, path: str) -> bool:
        file = Path(path)
        return (
            self._default(change, path)
            and not self.TEMPORARY.match(file.name)
            and not written_among_inputs(file, self._generated)
        )


def _shown(plan: BuildPlan, path: str) -> str:
    """A changed file as the author knows it: relative to the project."""
    file = Path(path)
    return file.relative_to(plan.root).as_posix() if file.is_relative_to(plan.root) else path


def say(message: str, *, error: bool = False) -> None:
    """One line of the preview's log, at once (it runs for hours; nothing may wait in a buffer)."""
    print(f"course preview: {message}", file=sys.stderr if error else sys.stdout, flush=True)
