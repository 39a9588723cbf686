"""Precision and recall of the veto hints on the labelled short answers, per veto item and split.

An answer counts as predicted positive for a veto id when any hint carries that id.
Run: .venv/bin/python benchmarks/veto_hints.py [--show-errors]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from course.errors import CourseError, Location
from course.grading.veto_hints import VETO_IDS, find_veto_hints

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "grading" / "fixtures" / "veto_answers.yml"
REQUIRED = ("id", "text", "question", "expected", "kind", "split")
KINDS = {"correct", "partial", "veto", "tricky-negation", "english", "mixed"}
SPLITS = ("dev", "heldout")


@dataclass(frozen=True)
class Score:
    """Answer-level counts for one veto id."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        """Share of flagged answers that really commit the veto (1.0 when nothing was flagged)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        """Share of vetoed answers that were flagged (1.0 when there are none)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def load_answers(path: Path = FIXTURES) -> list[dict]:
    """The labelled answers, checked for the fields the benchmark needs."""
    answers = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(answers, list):
        raise CourseError("expected a list of answers", Location(path))
    for n, answer in enumerate(answers, start=1):
        where = Location(path, cell=str(answer.get("id", f"#{n}")) if isinstance(answer, dict) else f"#{n}")
        missing = [k for k in REQUIRED if not isinstance(answer, dict) or k not in answer]
        if missing:
            raise CourseError(f"answer lacks {', '.join(missing)}", where)
        unknown = set(answer["expected"]) - set(VETO_IDS)
        if unknown or answer["kind"] not in KINDS or answer["split"] not in SPLITS:
            raise CourseError(f"expected ids in {VETO_IDS}, kind in {sorted(KINDS)}, split in {SPLITS}", where)
    return answers


def predictions(answers: list[dict]) -> dict[str, set[str]]:
    """Answer id → veto ids with at least one hint."""
    return {a["id"]: {h.veto_id for h in find_veto_hints(a["text"], a["question"])} for a in answers}


def score(answers: list[dict], predicted: dict[str, set[str]], veto_id: str) -> Score:
    """Answer-level true/false positives and misses for one veto id."""
    tp = fp = fn = 0
    for a in answers:
        truth, guess = veto_id in a["expected"], veto_id in predicted[a["id"]]
        tp += truth and guess
        fp += guess and not truth
        fn += truth and not guess
    return Score(tp, fp, fn)


def report(answers: list[dict], predicted: dict[str, set[str]]) -> str:
    """A table of precision/recall per veto id for dev, heldout and all answers."""
    lines = [f"{'split':8} {'veto':18} {'n+':>3} {'tp':>3} {'fp':>3} {'fn':>3} {'precision':>9} {'recall':>6}"]
    for split in (*SPLITS, "all"):
        subset = [a for a in answers if split in ("all", a["split"])]
        for veto_id in VETO_IDS:
            s = score(subset, predicted, veto_id)
            lines.append(f"{split:8} {veto_id:18} {s.tp + s.fn:>3} {s.tp:>3} {s.fp:>3} {s.fn:>3} "
                         f"{s.precision:>9.3f} {s.recall:>6.3f}")
        lines.append(f"{split:8} answers: {len(subset)}")
    return "\n".join(lines)


def errors(answers: list[dict], predicted: dict[str, set[str]], split: str) -> str:
    """Answers of one split whose predicted veto ids differ from the labels."""
    out = []
    for a in answers:
        if a["split"] == split and set(a["expected"]) != predicted[a["id"]]:
            out.append(f"{a['id']}: expected {sorted(a['expected'])} got {sorted(predicted[a['id']])}\n  {a['text']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table (and, with --show-errors, the dev-split mistakes)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-errors", action="store_true", help="list dev answers the hints get wrong")
    args = parser.parse_args(argv)
    answers = load_answers()
    predicted = predictions(answers)
    print(report(answers, predicted))
    if args.show_errors:
        print(errors(answers, predicted, "dev") or "no dev errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
