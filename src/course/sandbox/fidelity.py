"""Which engine runs a notebook: the fast kernel-less shell only where it runs it exactly as a Jupyter kernel.

The shell engine (course.sandbox.shell) saves a kernel's start-up on every submission, but it is not the
kernel the student ran in Jupyter. tests/sandbox/test_fidelity.py runs a differential corpus (rich display,
matplotlib inline, tqdm.auto, ipywidgets, top-level await, signal handlers, input(), magics, !shell, sys.exit,
warnings and stderr, KeyboardInterrupt, NBGRADER_EXECUTION) through both engines and requires equal outputs
and nbgrader scores. What that corpus found different is listed here: a notebook that uses any of it runs in
the real kernel, and its row says why.
"""

from __future__ import annotations

import re

# Features whose behaviour depends on running inside ipykernel: widgets (tqdm.auto draws a widget progress bar
# in a kernel, text on stderr without one), its event loop (asyncio.run and friends fail there with "cannot be
# called from a running event loop"), the kernel object, comms, and stdin.
KERNEL_ONLY = {
    "widgets (tqdm.auto, ipywidgets)": re.compile(
        r"\btqdm\s*\.\s*(auto|notebook|autonotebook)\b"
        r"|\bipywidgets\b|\btqdm\.auto\b"
    ),
    "asyncio event loop": re.compile(
        r"\basyncio\s*\.\s*(run|get_event_loop|new_event_loop|set_event_loop)\b"
        r"|\brun_until_complete\b|\bnest_asyncio\b"
    ),
    "the kernel object": re.compile(r"\bipykernel\b|\bget_ipython\s*\(\s*\)\s*\.\s*kernel\b|\bjupyter_client\b"),
    "comms": re.compile(r"\bcomm\s*\.\s*create_comm\b|\bComm\s*\("),
    "stdin": re.compile(r"\bsys\s*\.\s*stdin\b"),
}


def kernel_features(nb) -> list[str]:
    """The features of NB's code that the shell engine does not run as a Jupyter kernel does."""
    code = "\n".join(c.source for c in nb.cells if c.get("cell_type") == "code")
    return [name for name, pattern in KERNEL_ONLY.items() if pattern.search(code)]


def choose_engine(nb, setting: str) -> tuple[str, str]:
    """(engine, why) for NB under the GradingSandbox.engine SETTING (auto, shell or kernel)."""
    if setting != "auto":
        return setting, ""
    found = kernel_features(nb)
    if found:
        return (
            "kernel",
            f"ran in the Jupyter kernel: the notebook uses {', '.join(found)}, "
            "which the fast shell engine does not run as Jupyter does",
        )
    return "shell", ""
