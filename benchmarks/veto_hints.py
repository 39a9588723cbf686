"""Precision and recall of lesson 5's veto hints per veto id, on the tuning and the untouched split.

tuning:    the answers the rules were written and tuned on, scored together and per file:
           own:    tests/hints/fixtures/veto_answers.yml, written by the rules' author;
           voices: tests/hints/fixtures/veto_answers_voices.yml, written by another author in other
                   voices (long, quoting, hedged, formula-dense) without seeing the rules.
untouched: tests/hints/fixtures/veto_answers_heldout.yml when it exists, written independently and
           never looked at while tuning; only counts are printed for it, never its answers.
An answer counts as predicted positive for a veto id when any hint carries that id. Per kind (the
answer's voice or case), the table says how many answers of that kind were missed / falsely flagged.
Run: .venv/bin/python benchmarks/veto_hints.py [--show-errors]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location
from course.hints.find import find_veto_hints
from course.hints.vocabulary import Vocabulary, lesson_vocabulary
from course.lesson.validate import load_yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "hints" / "fixtures" / "veto_answers.yml"
VOICES = ROOT / "tests" / "hints" / "fixtures" / "veto_answers_voices.yml"
TUNING = {"own": FIXTURES, "voices": VOICES}  # the tuning split's files, reported together and apart
UNTOUCHED = ROOT / "tests" / "hints" / "fixtures" / "veto_answers_heldout.yml"
LESSON = "lesson05"
REQUIRED = ("id", "text", "question", "expected", "kind")
W = len("tuning (voices)")  # width of the split column


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


def load_vocabulary() -> Vocabulary:
    """Lesson 5's vocabulary, the one the labelled answers are about."""
    vocab = lesson_vocabulary(ROOT / "lessons", LESSON)
    if vocab is None:
        raise CourseError("expected lesson 5's veto-hint vocabulary", Location(ROOT / "lessons" / LESSON))
    return vocab


def veto_ids(vocab: Vocabulary) -> tuple[str, ...]:
    """The veto ids the vocabulary can hint, in its order."""
    return tuple(dict.fromkeys(vocab.vetoes.values()))


def load_answers(path: Path = FIXTURES, ids: tuple[str, ...] | None = None) -> list[dict]:
    """The labelled answers of one file, checked for the fields the benchmark needs."""
    ids = ids or veto_ids(load_vocabulary())
    answers = load_yaml(path).data  # libyaml where PyYAML has it: the labelled files are long
    if not isinstance(answers, list):
        raise CourseError("expected a list of answers", Location(path))
    seen = set()
    for n, answer in enumerate(answers, start=1):
        where = Location(path, cell=str(answer.get("id", f"#{n}")) if isinstance(answer, dict) else f"#{n}")
        missing = [k for k in REQUIRED if not isinstance(answer, dict) or k not in answer]
        if missing:
            raise CourseError(f"answer lacks {', '.join(missing)}", where)
        if not isinstance(answer["expected"], list) or set(answer["expected"]) - set(ids):
            raise CourseError(f"expected ids in {ids}, got {answer['expected']!r}", where)
        if answer["id"] in seen:
            raise CourseError("answer id appears twice; expected unique ids", where)
        seen.add(answer["id"])
    return answers


def load_tuning(ids: tuple[str, ...] | None = None) -> list[dict]:
    """Every tuning answer, from all the tuning files (an id may appear in only one of them)."""
    answers, where = [], {}
    for name, path in TUNING.items():
        for answer in load_answers(path, ids):
            if answer["id"] in where:
                raise CourseError(
                    f"answer id also appears in {where[answer['id']].name}; expected unique ids",
                    Location(path, cell=str(answer["id"])),
                )
            where[answer["id"]] = path
            answers.append(answer)
    return answers


def predictions(answers: list[dict], vocab: Vocabulary) -> dict[str, set[str]]:
    """Answer id → veto ids with at least one hint."""
    return {a["id"]: {h.veto_id for h in find_veto_hints(a["text"], vocab, a["question"])} for a in answers}


def score(answers: list[dict], predicted: dict[str, set[str]], veto_id: str) -> Score:
    """Answer-level true/false positives and misses for one veto id."""
    tp = fp = fn = 0
    for a in answers:
        truth, guess = veto_id in a["expected"], veto_id in predicted[a["id"]]
        tp += truth and guess
        fp += guess and not truth
        fn += truth and not guess
    return Score(tp, fp, fn)


def table(splits: dict[str, list[dict]], predicted: dict[str, set[str]], ids: tuple[str, ...]) -> str:
    """Precision/recall per veto id, one block per split."""
    lines = [f"{'split':{W}} {'veto':18} {'n+':>3} {'tp':>3} {'fp':>3} {'fn':>3} {'precision':>9} {'recall':>6}"]
    for split, answers in splits.items():
        for veto_id in ids:
            s = score(answers, predicted, veto_id)
            lines.append(
                f"{split:{W}} {veto_id:18} {s.tp + s.fn:>3} {s.tp:>3} {s.fp:>3} {s.fn:>3} "
                f"{s.precision:>9.3f} {s.recall:>6.3f}"
            )
        lines.append(f"{split:{W}} answers: {len(answers)}")
    return "\n".join(lines)


def confusion(splits: dict[str, list[dict]], predicted: dict[str, set[str]]) -> str:
    """Per split and kind: answers, exact, and which veto ids were missed or falsely flagged (counts)."""
    lines = [f"{'split':{W}} {'kind':18} {'n':>3} {'exact':>5}  missed / falsely flagged"]
    for split, answers in splits.items():
        by_kind: dict[str, list[dict]] = defaultdict(list)
        for a in answers:
            by_kind[str(a["kind"])].append(a)
        for kind, group in sorted(by_kind.items()):
            missed: dict[str, int] = defaultdict(int)
            false: dict[str, int] = defaultdict(int)
            for a in group:
                for v in set(a["expected"]) - predicted[a["id"]]:
                    missed[v] += 1
                for v in predicted[a["id"]] - set(a["expected"]):
                    false[v] += 1
            exact = sum(set(a["expected"]) == predicted[a["id"]] for a in group)
            lines.append(
                f"{split:{W}} {kind:18} {len(group):>3} {exact:>5}  missed {_counts(missed)} / flagged {_counts(false)}"
            )
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    """'comm-volume×2, shard-target×1' or '-'."""
    return ", ".join(f"{k}×{n}" for k, n in sorted(counts.items())) or "-"


def errors(answers: list[dict], predicted: dict[str, set[str]]) -> str:
    """Tuning answers whose predicted veto ids differ from the labels (never the untouched ones)."""
    return "\n".join(
        f"{a['id']} ({a['kind']}): expected {sorted(a['expected'])} got {sorted(predicted[a['id']])}\n  {a['text']}"
        for a in answers
        if set(a["expected"]) != predicted[a["id"]]
    )


def main(argv: list[str] | None = None) -> int:
    """Print the P/R table and the per-kind confusion (with --show-errors, the tuning split's mistakes)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-errors", action="store_true", help="list tuning answers the hints get wrong")
    args = parser.parse_args(argv)
    vocab = load_vocabulary()
    ids = veto_ids(vocab)
    files = {f"tuning ({name})": load_answers(path, ids) for name, path in TUNING.items()}
    splits = {"tuning": load_tuning(ids), **files}
    if UNTOUCHED.exists():
        splits["untouched"] = load_answers(UNTOUCHED, ids)
    else:
        print(f"(no untouched split: {UNTOUCHED.relative_to(ROOT)} does not exist)")
    predicted: dict[str, set[str]] = {}
    for split, answers in splits.items():
        if split in files:  # the files are parts of the tuning split, already predicted
            continue
        predicted.update({f"{split}:{k}": v for k, v in predictions(answers, vocab).items()})
        splits[split] = [{**a, "id": f"{split}:{a['id']}"} for a in answers]
    for split, answers in files.items():
        splits[split] = [{**a, "id": f"tuning:{a['id']}"} for a in answers]
    print(table(splits, predicted, ids))
    print()
    print(confusion(splits, predicted))
    if args.show_errors:
        print()
        print(errors(splits["tuning"], predicted) or "no tuning errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
