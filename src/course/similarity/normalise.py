"""Normalise answers before they are compared: code as a token stream with names canonicalised, text as characters.

Code: Python's tokenizer, every identifier that is not a keyword or builtin becomes `V` and every string `S`,
so renaming variables changes nothing; comments and layout are dropped. Each token keeps its span in the
source so shared runs can be highlighted. Text: NFKC-folded, lower-cased, without spaces and punctuation,
each character keeping its index in the answer. A blank's fill is normalised by the AST (`ast.unparse`).
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import keyword
import tokenize
import unicodedata

Span = tuple[int, int]
BUILTINS = frozenset(dir(builtins))
SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def fill_key(fill: str) -> str:
    """A blank's fill as the AST sees it (spacing and redundant parentheses folded); the raw text if not Python."""
    try:
        return ast.unparse(ast.parse(fill, mode="eval"))
    except SyntaxError:
        return " ".join(fill.split())


def code_tokens(source: str) -> list[tuple[str, Span]]:
    """SOURCE as (canonical token, character span) pairs; what cannot be tokenised is left out from there on."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in SKIPPED:
                continue
            span = (starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1])
            out.append((_canonical(tok), span))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # unfinished code: its complete tokens still count
    return out


def _canonical(tok: tokenize.TokenInfo) -> str:
    """A token as compared: names that are not keywords or builtins become V, strings S."""
    if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and tok.string not in BUILTINS:
        return "V"
    if tok.type == tokenize.STRING or tok.type in _FSTRING_TYPES:
        return "S"
    return tok.string


_FSTRING_TYPES = {
    getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, n)
}


def text_chars(text: str) -> list[tuple[str, int]]:
    """TEXT's letters and digits, folded (NFKC, lower case), each with its index in TEXT."""
    return [(c, i) for i, ch in enumerate(text) for c in folded_chars(ch)]


@functools.cache
def folded_chars(ch: str) -> str:
    """One character's letters and digits after folding: worked out once per character (a lesson page repeats few)."""
    return "".join(c for c in unicodedata.normalize("NFKC", ch).lower() if unicodedata.category(c)[0] in "LN")
