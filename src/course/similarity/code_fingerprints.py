"""Code beyond the skeleton: winnowing fingerprints (Schleimer, Wilkerson and Aiken 2003) of students' own code.

Each student's own code (what they added to the released notebook) becomes a canonical token stream
(course.similarity.normalise: renamed variables look alike), hashed in runs of K tokens; winnowing keeps the
smallest hash of every window of W runs. Fingerprints of the release and the solution are boilerplate, and
those too many students share are common code; statements moved around keep their fingerprints.
copydetect implements the same algorithm but compares every pair of files on disk, which a class of 1,000
cannot afford; here fingerprints go into the inverted index of course.similarity.grams instead.
"""

from __future__ import annotations

from course.similarity.collect import ClassWork
from course.similarity.evidence import Evidence
from course.similarity.grams import shared_grams
from course.similarity.normalise import Span, code_tokens

K = 8  # tokens per hashed run: about one short statement
W = 4  # window of runs of which the smallest hash is kept
MIN_SHARED = 4
MIN_CONTAINMENT = 0.4


def fingerprints(source: str) -> dict[int, list[Span]]:
    """SOURCE's winnowed fingerprints, each with the span of the K tokens it hashes."""
    tokens = code_tokens(source)
    runs = [
        (hash(tuple(t for t, _ in tokens[i : i + K])), (tokens[i][1][0], tokens[i + K - 1][1][1]))
        for i in range(len(tokens) - K + 1)
    ]
    out: dict[int, list[Span]] = {}
    windows = [runs[i : i + W] for i in range(len(runs) - W + 1)] if len(runs) >= W else [runs][: len(runs) > 0]
    for window in windows:
        h, span = min(window, key=lambda r: r[0])
        if span not in out.get(h, []):
            out.setdefault(h, []).append(span)
    return out


def code_fingerprints(work: ClassWork, max_share: int) -> list[Evidence]:
    """Evidence from pairs whose own code shares rare fingerprints beyond the release."""
    boilerplate = set(_all_runs(work.boilerplate_code))
    by_student = {w.student: w for w in work.works}
    grams = {w.student: fingerprints(w.own_code) for w in work.works if w.own_code}
    out = []
    for pair in shared_grams(grams, boilerplate, max_share):
        if pair.shared >= MIN_SHARED and pair.containment >= MIN_CONTAINMENT:
            out.append(
                Evidence(
                    pair.a,
                    pair.b,
                    "code",
                    "own code",
                    min(1.0, pair.containment),
                    f"own code beyond the release: {pair.containment:.0%} of the smaller one's "
                    f"fingerprints in common ({pair.shared}), names ignored",
                    by_student[pair.a].own_code,
                    by_student[pair.b].own_code,
                    pair.spans_a,
                    pair.spans_b,
                )
            )
    return out


def _all_runs(source: str) -> dict[int, None]:
    """Every K-token run's hash of SOURCE (not only the winnowed ones): all of the boilerplate is excluded."""
    tokens = [t for t, _ in code_tokens(source)]
    return {hash(tuple(tokens[i : i + K])): None for i in range(len(tokens) - K + 1)}
