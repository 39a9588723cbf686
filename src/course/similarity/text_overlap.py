"""Free-text overlap: character n-grams of each written answer, minus every n-gram of text anyone may quote.

Chinese has no spaces, so answers are compared as runs of N characters (letters and digits only, folded).
n-grams found in the lesson page, the questions, the rubric or the released notebook are removed first, so
an answer that quotes the lesson is not evidence; so are n-grams too many students share (common phrasing).
"""

from __future__ import annotations

from course.similarity.collect import ClassWork
from course.similarity.evidence import Evidence
from course.similarity.grams import shared_grams
from course.similarity.normalise import Span, folded_chars, text_chars

N = 6  # characters per gram: about three Chinese words
MIN_SHARED = 8  # fewer shared grams than this is a coincidence of phrasing
MIN_CONTAINMENT = 0.25  # a light paraphrase keeps about 40 % of its 6-grams; independent answers under 20 %


def char_grams(text: str, n: int = N) -> dict[int, list[Span]]:
    """TEXT's n-grams of folded characters (hashed), each with the span it covers in TEXT."""
    chars = text_chars(text)
    folded = "".join(c for c, _ in chars)  # sliced, not joined again, for each gram
    out: dict[int, list[Span]] = {}
    for i in range(len(chars) - n + 1):
        out.setdefault(hash(folded[i : i + n]), []).append((chars[i][1], chars[i + n - 1][1] + 1))
    return out


def gram_set(text: str, n: int = N) -> set[int]:
    """The keys of char_grams(TEXT): what may be quoted needs no spans (the lesson page is long)."""
    folded = text.translate({ord(ch): folded_chars(ch) for ch in set(text)})
    return {hash(folded[i : i + n]) for i in range(len(folded) - n + 1)}


def text_overlap(work: ClassWork, max_share: int) -> list[Evidence]:
    """Evidence from each question's written answers that share rare, non-quoted text."""
    boilerplate = gram_set(work.boilerplate_text)
    by_student = {w.student: w for w in work.works}
    out = []
    for qid in work.question_ids:
        grams = {w.student: char_grams(w.answers.get(qid, "")) for w in work.works if w.answers.get(qid)}
        for pair in shared_grams(grams, boilerplate, max_share):
            if pair.shared >= MIN_SHARED and pair.containment >= MIN_CONTAINMENT:
                out.append(
                    Evidence(
                        pair.a,
                        pair.b,
                        "text",
                        qid,
                        min(1.0, 2 * pair.containment),
                        f"{qid}: {pair.containment:.0%} of the shorter answer's own wording "
                        f"(not from the lesson) is in the other ({pair.shared} shared {N}-character runs)",
                        by_student[pair.a].answers[qid],
                        by_student[pair.b].answers[qid],
                        pair.spans_a,
                        pair.spans_b,
                    )
                )
    return out
