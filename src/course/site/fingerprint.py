"""Decide whether a build has work to do: a hash of everything it reads, stamped into each built site."""

from __future__ import annotations

import hashlib
from pathlib import Path

from course.site.plan import BuildPlan

STAMP = ".build-stamp"


def source_fingerprint(plan: BuildPlan, variants: list[str]) -> str:
    """Hash of the build inputs (lessons, solutions, assets, filter, course package) and the variants."""
    h = hashlib.sha256(" ".join(variants).encode())
    skip = [plan.root / g for g in plan.config.generated_assets]
    roots = [plan.root / p for p in plan.config.build_inputs] + [Path(__file__).resolve().parents[1]]
    for root in roots:
        files = sorted(root.rglob("*")) if root.is_dir() else [root]
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts and not any(f == s or s in f.parents for s in skip):
                h.update(f"{f.relative_to(f.anchor)}\0".encode() + f.read_bytes())
    return h.hexdigest()


def is_up_to_date(plan: BuildPlan, variants: list[str], fingerprint: str) -> bool:
    """True when every variant's site carries this fingerprint."""
    return all(_read(plan.site_dir(v) / STAMP) == fingerprint for v in variants)


def _read(path: Path) -> str | None:
    """A stamp's content, or None when there is none."""
    try:
        return path.read_text("utf-8").strip()
    except OSError:
        return None
