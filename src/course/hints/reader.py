"""A small rule-based reader of short answers (Chinese, English, mixed) that knows no lesson.

It cuts an answer into sentences and clauses, scans each clause into cues with a lexicon, and marks
which clauses are the student's own assertions. The language it knows is the language of claims:
negation, reported speech (有人以为 / a myth), quotes, if-clauses, contrast and causal connectives,
comparisons (倍 / 一半 / more / same), totals and limits ("降到 0"). What the claims are about (the
lesson's subjects, objects, units and verbs) comes from the lesson's vocabulary
(course.hints.vocabulary), scanned in the order of SCAN_ORDER together with the words below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

NUM = r"(?:\d+(?:\.\d+)?|[一两二三四五六]|半)"
EN_START = r"(?<![A-Za-z])"  # an English word starts here
EN_END = r"(?![A-Za-z])"  # ... and ends here


def en_words(*words: str) -> str:
    """English words (regex fragments) as whole words, never inside a longer word."""
    return rf"{EN_START}(?:{'|'.join(words)}){EN_END}"


# fmt: off
# (the cue tables below are laid out by hand, one alternative of a regex per line; the formatter leaves them so)
# Language cues: (kind, regex, value). A value of None means "parse it from the match" (cue_value).
GENERIC: dict[str, tuple[str, object]] = {
    # reported speech: someone else's (mis)belief, not the student's assertion
    "attrib_local": (r"contrary to[^,，;；]*|与(?:常见)?(?:说法|看法|误解|直觉)相反", True),
    "attrib": (r"(?:(?:有|有些|有的|很多|不少|许多|一些|部分|常有|常常有)(?:人|同学|学生|初学者|新手)|别人|初学者|新手)"
               r"(?:会|常|常常|往往)?(?:以为|认为|说|觉得|声称|相信)"
               r"|(?:我|一开始|起初|原来|本来|之前|以前)(?:我)?(?:还|曾|一直)?以为"
               r"|(?:很多|有些|一些|有的|不少)?(?:资料|文章|博客|书上?|网上|教程|帖子)(?:上|里)?(?:说|认为|称|写(?:道|着)?)"
               r"|误以为|误认为|常见(?:的)?(?:误区|误解|错误|说法)|(?:有|有一种|一种|有些)(?:说法|观点|看法)(?:认为|是)?|误区|所谓|据说"
               r"|不能说|不应该说|并不是说|说[^，,。]{0,30}是错(?:的|误的)"
               rf"|{EN_START}(?:some|many|most)(?:one|\s+(?:\w+\s+){{0,2}}?(?:people|students|readers|folks))?"
               r"\s+(?:wrongly\s+|often\s+|mistakenly\s+)?"
               r"(?:think|believe|claim|say|assume)s?"
               rf"|{EN_START}(?:many|some)\s+(?:sources|articles|blogs|tutorials|posts)\s+(?:say|claim|suggest)"
               rf"|{EN_START}(?:myth|misconception){EN_END}"
               r"|people (?:often |sometimes |commonly )?(?:think|believe|assume|say)"
               r"|it is (?:often |commonly )?(?:said|claimed|believed)"
               r"|a common (?:mistake|error) is|(?:it'?s|it is) (?:wrong|incorrect|false|a mistake|not true|a myth)"
               r"(?: to (?:say|think|claim|believe))?(?: that)?"
               r"|I (?:used to|initially|first|originally|once) (?:think|thought|believe|believed|assumed?)", True),
    "postneg": (r"是(?:一种)?(?:错的|错误的|不对的|误解|谣言|不可能的)|不对|不成立|不正确|不可能|做不到"
                r"|is (?:wrong|false|incorrect|mistaken|a myth|a misconception)|(?:is )?not true", True),
    # a first impression that a contrast then corrects ('直觉上 X 会多通信，但算下来没有')
    "impression": (r"直觉上|乍看|乍一看|看起来|起初|一开始以为|本以为|原以为|" + en_words(
        "intuitively", r"at first(?:\s+(?:glance|sight))?", r"I (?:first |initially )?thought",
        r"it (?:may |might )?seems?"),
        True),
    # hedges take their span so that 大约/大概 are not read as 'more'; a hedged claim is still a claim
    "hedge": (r"大约|大概|大致|大体|大多|差不多|约莫|左右|也许|或许|" + en_words("approximately", "roughly", "about",
                                                                   "around", "probably", "maybe", "perhaps"), True),
    "same": (r"不变|没变(?!多|少|大|小)|没有变化|相同|一样|相等|持平|等同|(?:exactly\s+)?as (?:much|many) as|"
             rf"{EN_START}(?:same|identical|unchanged|equal)(?:\s+(?:as|to))?{EN_END}", True),
    "ratio": (rf"翻了?一?(?:倍|番)|(?P<c>\d+(?:\.\d+)?|[一两二三四])\s*(?:倍|x{EN_END}|×|[\s-]*times{EN_END}"
              rf"|[\s-]*fold{EN_END})"
              rf"|{EN_START}(?P<w>two|three|four|one and a half)[\s-]+(?:times|fold){EN_END}"
              rf"|翻倍|加倍|{EN_START}doubl(?:e|es|ed){EN_END}"
              rf"|twice(?=\s+(?:as|that|the|of))|一半|减半|{EN_START}half{EN_END}|{EN_START}halve[sd]?{EN_END}", None),
    "percent": (r"(?P<c>\d+(?:\.\d+)?)\s*%", None),
    "distributive": (rf"各(?!\s*(?:自|个|卡|层|张|rank|副本|阶段|DP))|{EN_START}(?:each|apiece){EN_END}", True),
    # 'each step/part' refers to the parts just listed only right after a list ('拆成 A 和 B 两步，每步 Ψ')
    "distributive_weak": (r"每(?:一)?(?:步|项|个|次|部分)|分别|" + en_words("respectively"), True),
    "count": (rf"两次|2\s*次|{EN_START}twice{EN_END}|{EN_START}two(?=\s+(?:all|reduce)){EN_END}"
              rf"|三次|3\s*次|{EN_START}three(?=\s+(?:all|reduce)){EN_END}|(?<=[A-Za-z])\s*[×x*]\s*(?P<k>[1-4])(?![\d.])"
              r"|(?<![\d.])(?P<j>[1-4])\s*[·×*](?=\s*[A-Za-z])",
              None),
    "incremental_lead": (rf"不仅|不但|不只|不光|不止|{EN_START}not only{EN_END}|多(?=[^，,。]{{0,3}}(?:分片|切"
                         rf"|拆))", True),
    "only": (rf"只有|只是|只会|只能|仅仅|只|仅|{EN_START}only{EN_END}|{EN_START}just{EN_END}"
             rf"|{EN_START}merely{EN_END}", True),
    "incremental": (rf"还|也|再|又|额外|进一步|{EN_START}(?:also|additionally|further|too|as well|adds?|added|adding)"
                    rf"{EN_END}", True),
    "limit": (r"(?:趋|接|逼)(?:近|向|于)(?:于)?\s*(?:0|零)"
              r"|(?:降|减|缩|压)(?:低|少|小)?(?:到|至|为)\s*(?:几乎|接近)?\s*(?:为)?\s*(?:0|零)(?![.\d])"
              r"|(?:降|减|缩)?(?:低|少|小)?(?:到|至)?\s*任意(?:低|小)|(?:压|降|减|缩)(?:到|至)[^，。；]{0,6}任意(?:值|大小|程度)"
              r"|(?:基本|几乎)?(?:可以|可)忽略(?:不计)?|(?:几乎|基本)(?:都)?(?:是)?全?空(?:的)?(?![间])"
              r"|无限(?:降低|下降|减少|缩小|小|低|省)|归零|[→>]\s*0(?![.\d])"
              rf"|{EN_START}arbitrar(?:y|ily){EN_END}(?!\s+(?:large|long|big))"
              rf"|{EN_START}negligible{EN_END}|(?:goes|go|drops?|falls?|shrinks?|tends?|approach(?:es)?)"
              r"\s+(?:to\s+)?zero|(?:to|towards?) zero|vanish\w*|unbounded|without (?:limit|bound)"
              r"|(?:没有|无)(?:下限|下界|底)|no (?:lower )?(?:bound|floor)|no(?=\s+memory\s+wall)"
              r"|(?:想|要)(?:要)?多小(?:就)?有多小|(?:压|降|减|缩)(?:到|至)足够(?:小|低)"
              r"|as small as (?:we|you|one) (?:like|want|wish)|arbitrarily small"
              r"|(?:(?<=needs )|(?<=need )|(?<=requires )|(?<=uses ))no(?=\s+(?:\w+\s+)?memory)"
              r"|(?:几乎)?不(?:再)?(?:需要|占用?)(?:任何)?(?=显存|内存)|零(?=显存|内存)",
              True),
    "speed": (r"快|慢|耗时|时间|延迟|吞吐|效率|" + en_words("faster", "slower", "latency", "time", "throughput"), True),
    "more": (rf"更多|更大|更高|变多|增多|增加|增大|增长|升至|多出来的|多出|多|大|高|{EN_START}(?:more|larger|higher"
             rf"|greater|bigger){EN_END}"
             rf"|{EN_START}(?:raises?|raised|raising|grows?|grew|costlier|pricier){EN_END}|贵|昂贵"
             rf"|{EN_START}increase[sd]?{EN_END}|{EN_START}extra{EN_END}|{EN_START}additional{EN_END}", True),
    "less": (rf"更少|更小|更低|减少|降低|少|便宜|{EN_START}cheaper{EN_END}|{EN_START}(?:less|fewer|smaller"
             rf"|lower){EN_END}|{EN_START}decrease[sd]?{EN_END}", True),
    "total_marker": (r"一共|总共|共计|合计|总计|总量|加起来|合起来|共|=|≈|等于|约等于|" + en_words(
        "in total", "altogether", "sum", "gives?", "giving", "makes?", "comes? to", "adds? up to", "totals?"),
                     True),
    "exclusion": (r"除外|(?<!消)除了|不含|不包括|之外|" + en_words("excluding", "except", "apart from"), True),
    "from": (r"从|由(?=\s*\d|[^，。；]{0,12}(?:变为|变成|降为|降到|增至|到))|" + en_words("from"), True),
    "to": (r"(?:到|至|为)|→|->|变成|(?<![A-Za-z])to(?![A-Za-z])", True),
    "hypothetical": (rf"如果|假如|假设|倘若|要是|若|{EN_START}if{EN_END}|{EN_START}suppose{EN_END}"
                     r"|(?<![假建预])设(?!计|置|备)|(?:令|记)(?=\s*\S{1,8}\s*(?:为|=))"  # a definition: 设参数量为 K
                     + "|" + en_words("let", "denote"), True),
    "zero_number": (r"(?<![\d.\w])(?:0|零)(?![.\d%\w])", True),
    # the end of a when-phrase: a negation inside it ('不做梯度累积时') negates only the condition
    "when": (r"(?<![耗同实及临瞬按定准适随暂])时(?![间延刻序钟长])|的时候|的话|情况下", True),
    # 不属于/不归 (不属于自己的梯度) and 别的/别人 say whose, not that something is not done
    "neg": (r"不(?!仅|但|只|光|同|少|断|过|管|论|久|止|一样|例外|属于|归|[到了着上]\s*的)|没有?|无法|并非|而非|绝非"
            r"|未(?!来)|别(?!的|人|处)"
            r"|无(?!限|穷|论|关|需)"
            rf"|{EN_START}(?:not(?!\s+only)|no|never|cannot|none|neither|nor|without|nothing|nobody){EN_END}|n't"
            rf"|不再|省去|免去|跳过|{EN_START}(?:stops?|stopped|ceases?|ceased)(?=\s+\w+ing){EN_END}"
            rf"|{EN_START}(?:skips?|skipped|avoids?|avoided|omits?|omitted){EN_END}", True),
}

# Scan order: a span taken by an earlier kind is not reused by a later one. Lower-case kinds without a
# GENERIC entry come from the lesson's vocabulary ("volume" is built from its unit words, "repeat_volume" from
# them and a condition's repeat symbol: '3mΨ').
SCAN_ORDER = (
    "attrib_local", "attrib", "impression", "postneg", "hedge", "same", "condition", "repeat_volume", "volume",
    "ratio", "percent", "distributive", "distributive_weak", "count",
    "subject", "own_agent", "other_agent", "op", "phase", "object", "static", "total", "exclusion", "memory",
    "whole", "fraction", "partition", "transient", "storage", "usage", "incremental_lead", "only", "incremental",
    "limit", "capacity", "scale", "quantity", "speed", "more", "less", "total_marker", "from", "to",
    "hypothetical", "zero_number", "when", "neg",
)

# Clause boundaries: punctuation, and connectives that open a new clause.
CLAUSE_PUNCT = "，,：:"
SENTENCE_PUNCT = "。！？!?；;\n"
QUOTE_PAIRS = {"“": "”", "「": "」", "『": "』", '"': '"'}
CONTRAST = (r"但是|但|然而|其实|实际上|事实上|不过|可是|可惜|却|反而|相反|(?<![从因然进反继])而(?![且言])|后来|重读后|"
            + en_words("however", "but", "whereas", "while", "actually", "in fact", "rather", "instead", "yet", "later",
                       r"then I reali[sz]ed", "now I"))
CAUSAL = (r"所以|因此|因而|从而|于是|因为|由于|故而|"
          + en_words("so", "therefore", "thus", "hence", "because", "since", "which is why"))
CONNECTIVES = (("contrast", CONTRAST), ("causal", CAUSAL))
REPLACE_OPENERS = (("replace_neg", r"^(?:而|but\s+)?(?:不是|并非|非|rather than|instead of|not)"),
                   ("replace_pos", r"^而是|^(?:but\s+)?rather\b"))
ELLIPSIS_END = (r"(?:能|可以|可|会|行|是|也一样|也是一样|同样|如此|亦然|也是|不例外|包括在内|"
                + en_words("can", "cannot", "can't", "does", "doesn't", "do", "don't", "will", "won't", "is", "isn't",
                           "are", "aren't", "too", "as well", "either", "likewise", "included")
                + r")\s*(?:的|了|呢|啊|not)?\s*$")
INCLUSION = r"^(?:包括|包含|连同|以及|including|along with|as well as)"  # '…分片，包括激活' borrows the predicate
WH_QUESTION = r"什么|哪些|哪个|哪几|哪一|(?<![A-Za-z])(?:what|which)(?![A-Za-z])"
TENTATIVE = r"吧|我(?:觉得|猜|理解|认为|估计)|应该|大概|可能|(?<![A-Za-z])I (?:think|guess|suppose)(?![A-Za-z])"
ANSWER = (r"^\s*(?:答案是|答：|回答是)?\s*(?:绝对|当然|肯定|并)?\s*(?:不|没)?"
          r"\s*(?:能|可以|会|行|是的?|对)\s*(?:的|了)?\s*$")
COMPARATIVE_BEFORE = (r"(?:比|(?<=[大小多少高低])于|相比于?|相较于?|较之?|对比|不同于|区别于|像|如同|(?<!不)同(?!样)"
                      r"|倍|×|直到|从|"
                      + en_words("than", r"compared\s+(?:to|with)", "versus", r"vs\.?", "over", "like", "unlike",
                                 "from", "as", "until", "before", r"prior\s+to", r"on\s+top\s+of",
                                 r"in\s+addition\s+to", "beyond")
                      + r")\s*$")
COMPARATIVE_AFTER = r"^\s*(?:的)?\s*(?:基础上|之上|相比|相较|比较|比起来)|^\s*\+"  # 'ZeRO-2 = ZeRO-1 + X': a base
RATIO_TARGET_BEFORE = (r"(?:比|(?<=[大小多少高低])于|是|为|与|和|跟|同|较|相比于?|对比|只有|仅有|只占|相当于|"
                       + en_words("than", "of", "to", "as", "with") + r")\s*(?:的)?\s*$")
# a part
ORDINAL = r"(?:第[一二三四1-4]个?|(?:the\s+)?(?:first|second|third|other|remaining)|another|剩下的?|另一个?)\s*$"
IDENTITY = r"^\s*(?:的)?\s*(?:是|就是|来自|来源于|=|is|comes from|is due to)\s*"  # '多出来的 Ψ 是 X'
STANDARD_BEFORE = (r"(?:(?<![A-Za-z])(?:the way|just like|like|unlike|than|compared (?:to|with))|像|如同|不同于)"
                   r"\s*(?:the\s+)?$")
PLUS = r"\+|(?<![增追添附更参])加上?(?![到至倍速卡入])|(?<![A-Za-z])plus(?![A-Za-z])"  # 'Ψ + Ψ', not 增加到
GROUP_JOINER = r"^\s*(?:和|与|及|以及|、|/|,|&|或|跟|and|or)\s*$"
AFTER_PREDICATE_NEG = (r"^\s*(?:的)?\s*(?:不了|不到|不开|不是|并非|而非|非|neither|nor|no\b|(?:并|也)?不(?:覆盖|包括"
                       r"|包含|涉及)"
                       r"|(?:范围|对象)\s*(?:并|也)?(?:不|没有?))")  # '分片的范围不覆盖激活'

# Typographic variants read as their plain forms.
NORMALISE = str.maketrans({"’": "'", "‘": "'", "（": "(", "）": ")", "＝": "=", "＋": "+", "－": "-", "—": "-",
                           "−": "-"})
# LaTeX in answers read as plain text: symbols as characters, markup removed, labels of an
# \underbrace put before what they label ('\underbrace{\Psi}_{AG}' reads 'AG Ψ').
_LATEX_SYMBOLS = {"times": "×", "cdot": "·", "to": "→", "rightarrow": "→", "infty": "∞", "approx": "≈",
                  "Psi": "Ψ", "psi": "ψ", "Phi": "Φ", "phi": "φ", "le": "≤", "ge": "≥", "lim": "lim"}
LATEX = (
    (r"\\([A-Za-z]+)(?![A-Za-z])", lambda m: _LATEX_SYMBOLS.get(m.group(1), m.group(0))),
    (r"\\(?:text|mathrm|textrm|mathbf|mathit|operatorname|mbox)\{([^{}]*)\}", r"\1"),
    (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2"),
    (r"\\(?:underbrace|overbrace)\{([^{}]*)\}[_^]\{([^{}]*)\}", r"\2 \1"),
    (r"\\(?:[,;! ]|quad|qquad)", " "),
    (r"\\(?:left|right|displaystyle|[bB]igg?)(?![A-Za-z])", ""),
    (r"_\{([^{}]*)\}", r"_\1"),
    (r"\$", ""),
)
# fmt: on

HOST_KINDS = ("subject", "op", "phase")  # what a parenthetical remark can be about
Lexicon = tuple[tuple[str, re.Pattern, object], ...]


def volume_patterns(unit: str, multiple: str | None) -> list[str]:
    """Quantities written with the lesson's unit: '3Ψ', '2 × Ψ', 'Ψ/2', '3 倍参数量', '参数量的 2 倍'."""
    patterns = [rf"(?:(?P<c>{NUM})\s*(?:[×x*·]\s*)?)?\$?\s*(?:{unit})(?:\s*/\s*(?P<div>\d+)(?![\d.]|\s*(?:{unit})))?"]
    if multiple:
        patterns.insert(
            0,
            rf"(?P<c>{NUM})\s*(?:倍|×|x|times)\s*(?:的)?\s*(?:{multiple})"
            rf"|(?:{multiple})的\s*(?P<c2>{NUM})\s*倍",
        )
    return patterns


def repeat_volume_patterns(unit: str, repeat: str) -> list[str]:
    """Quantities times the number of repetitions: '3mΨ', '3m·Ψ', '3Ψ × m' (the value is the coefficient)."""
    return [
        rf"(?:(?P<c>{NUM})\s*(?:[×x*·]\s*)?)?(?:{repeat})\s*(?:[×x*·]\s*)?(?:{unit})",
        rf"(?P<c2>{NUM})?\s*(?:{unit})\s*[×x*·]\s*(?:{repeat})",
    ]


@dataclass(frozen=True)
class Cue:
    """A lexicon match in a clause: its kind, parsed value and span."""

    kind: str
    value: object
    start: int
    end: int


@dataclass
class Clause:
    """One clause with its cues and the flags that decide whether it is an assertion."""

    text: str
    sentence: str
    opener: str
    cues: list[Cue]
    sentence_cues: list[Cue]  # cues of the whole sentence, for a clause that inherits its topic
    index: int  # which sentence of the answer
    reported: bool = False
    hypothetical: bool = False
    aside: bool = False  # a parenthetical remark
    introduces: bool = False  # ends with a colon: it announces what follows ('ZeRO-1 的观察是：')


def compile_lexicon(lesson: dict[str, list[tuple[str, object]]]) -> Lexicon:
    """The scanning lexicon: generic language cues and the lesson's entries, in SCAN_ORDER."""
    entries = []
    for kind in SCAN_ORDER:
        if kind in GENERIC:
            entries.append((kind, *GENERIC[kind]))
        entries += [(kind, pattern, value) for pattern, value in lesson.get(kind, ())]
    return tuple((kind, re.compile(pattern, re.I), value) for kind, pattern, value in entries)


# ---------------------------------------------------------------------------------------------
# Splitting
# ---------------------------------------------------------------------------------------------


def _blank_quotes(text: str) -> str:
    """Blank quoted spans (same length) so quoted claims are not read as the student's own."""
    chars = list(text)
    i = 0
    while i < len(chars):
        close = QUOTE_PAIRS.get(chars[i])
        j = text.find(close, i + 1) if close else -1
        if j > 0:
            chars[i + 1 : j] = " " * (j - i - 1)
            i = j
        i += 1
    return "".join(chars)


def _depths(text: str) -> list[int]:
    """For each position, how deep inside parentheses it is (nothing is cut inside them)."""
    depth, out = 0, []
    for ch in text:
        depth = depth + 1 if ch == "(" else depth
        out.append(depth)
        depth = max(0, depth - 1) if ch == ")" else depth
    return out


def _sentence_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, terminator) of each sentence; a '.' ends a sentence only before space/end."""
    spans, start = [], 0
    for i, (ch, depth) in enumerate(zip(text, _depths(text))):
        period = (
            ch == "."
            and (i + 1 == len(text) or text[i + 1].isspace())
            and not re.search(r"(?:e\.g|i\.e|vs|etc)$", text[start:i])
        )
        if depth == 0 and (ch in SENTENCE_PUNCT or period):
            spans.append((start, i, ch))
            start = i + 1
    spans.append((start, len(text), ""))
    return [(a, b, t) for a, b, t in spans if text[a:b].strip()]


def _cut_points(sentence: str) -> dict[int, str]:
    """Position where a new clause starts → the connective kind that opens it ('' after punctuation)."""
    depth = _depths(sentence)
    cuts = {i + 1: "" for i, ch in enumerate(sentence) if ch in CLAUSE_PUNCT and depth[i] == 0}
    for kind, pattern in CONNECTIVES:
        for m in re.finditer(pattern, sentence, re.I):
            since = max((c for c in cuts if c <= m.start()), default=0)
            if m.group(0) == "而" and re.search(r"因为|由于|因", sentence[since : m.start()]):
                continue  # '不会因为加卡而变成 2Ψ': one clause, one negation
            if m.group(0) in ("因为", "由于") and re.search(
                r"(?:不|不会|不是|并非|并不|是)\s*$", sentence[: m.start()]
            ):
                continue  # 'X 是因为 Y': one clause, X's reason
            if m.start() > 0 and depth[m.start()] == 0:
                cuts[m.start()] = cuts.get(m.start()) or kind
    return cuts


def _clauses(sentence: str) -> list[tuple[str, str, bool]]:
    """(opener kind, clause text, ends with a colon) pieces of one sentence; '，但' opens a contrast clause."""
    cuts = _cut_points(sentence)
    bounds = sorted(cuts) + [len(sentence)]
    pieces, start, opener = [], 0, ""
    for pos in bounds:
        piece = sentence[start:pos].strip(" ，,：:")
        if piece:
            pieces.append((_opener(opener, piece), piece, sentence[start:pos].rstrip().endswith(("：", ":"))))
            opener = ""
        start, opener = pos, cuts.get(pos) or opener  # an empty piece ('，但') passes its opener on
    return pieces


def _opener(kind: str, piece: str) -> str:
    """Refine a contrast opener into a replacement (而是 X / 而不是 X) when the clause says so."""
    body = re.sub(CONTRAST, "", piece, count=1, flags=re.I).strip() if kind == "contrast" else piece
    for name, pattern in REPLACE_OPENERS:
        if re.match(pattern, piece, re.I) or re.match(pattern, body, re.I):
            return name
    return kind


def _asides(piece: str) -> list[re.Match]:
    """Parenthetical remarks of a clause that say something (not a bare '(Ψ)' or '(N_d)')."""
    return [
        m
        for m in re.finditer(r"\(([^()]*)\)", piece)
        if re.search(r"[\u4e00-\u9fff]{2}|[A-Za-z]{3,}\s+[A-Za-z]{2,}", m.group(1))
    ]


# ---------------------------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------------------------


def scan(text: str, lexicon: Lexicon) -> list[Cue]:
    """All lexicon cues of a clause; a span taken by an earlier lexicon entry is not reused.

    Patterns run on the unmasked text so their look-arounds see real neighbours (不仅 is not 不).
    """
    taken = [False] * len(text)
    cues = []
    for kind, pattern, value in lexicon:
        for m in pattern.finditer(text):
            if not m.group(0).strip() or any(taken[m.start() : m.end()]):
                continue
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
            parsed = cue_value(kind, m) if value is None else value(m) if callable(value) else value
            cues.append(Cue(kind, parsed, m.start(), m.end()))
    return sorted(cues, key=lambda c: c.start)


_DIGITS = {"一": 1.0, "两": 2.0, "二": 2.0, "三": 3.0, "四": 4.0, "五": 5.0, "六": 6.0, "半": 0.5}


def number(token: str | None, default: float) -> float:
    """A coefficient written with digits or a Chinese numeral."""
    if not token:
        return default
    return _DIGITS.get(token, None) or float(token)


def cue_value(kind: str, m: re.Match) -> object:
    """Parse the value of cues whose lexicon entry has no constant value."""
    groups = m.groupdict()
    word = m.group(0).lower()
    if kind == "ratio":
        if groups.get("w"):
            return {"two": 2.0, "three": 3.0, "four": 4.0, "one and a half": 1.5}[groups["w"].lower()]
        if groups.get("c"):
            return number(groups["c"], 1.0)
        return 0.5 if ("半" in word or "half" in word) else 2.0
    if kind == "percent":
        return float(groups["c"]) / 100
    if kind == "count":
        if groups.get("k") or groups.get("j"):
            return float(groups.get("k") or groups["j"])
        return 3.0 if ("三" in word or "3" in word or "three" in word) else 2.0
    return number(groups.get("c") or groups.get("c2"), 1.0) / float(groups.get("div") or 1)  # volume


def of(cues: Iterable[Cue], *kinds: str) -> list[Cue]:
    """Cues of the given kinds, in order."""
    return [c for c in cues if c.kind in kinds]


def between(cues: Iterable[Cue], kind: str, start: int, end: int) -> list[Cue]:
    """Cues of one kind inside [start, end)."""
    return [c for c in cues if c.kind == kind and start <= c.start < end]


# ---------------------------------------------------------------------------------------------
# Clauses in context
# ---------------------------------------------------------------------------------------------


def normalise(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text as the reader scans it (LaTeX and typographic variants made plain), and for each of
    its characters the span of the original it came from (so a hint quotes what was written)."""
    chars = [(c, (i, i + 1)) for i, c in enumerate(text.translate(NORMALISE))]
    for pattern, repl in LATEX:
        current = "".join(c for c, _ in chars)
        out, pos = [], 0
        for m in re.finditer(pattern, current):
            out += chars[pos : m.start()]
            new = m.expand(repl) if isinstance(repl, str) else repl(m)
            span = (chars[m.start()][1][0], chars[m.end() - 1][1][1])
            out += [(c, span) for c in new]
            if not new and out:  # a deleted '$' still belongs to the text before it
                out[-1] = (out[-1][0], (out[-1][1][0], span[1]))
            pos = m.end()
        chars = out + chars[pos:]
    return "".join(c for c, _ in chars), [span for _, span in chars]


def clauses_of(text: str, lexicon: Lexicon) -> Iterable[tuple[Clause, bool]]:
    """Every clause of an answer, with whether its sentence is a question."""
    plain, origin = normalise(text)
    blanked = _blank_quotes(plain)
    for index, (start, end, term) in enumerate(_sentence_spans(blanked)):
        masked, original = blanked[start:end], text[origin[start][0] : origin[end - 1][1]].strip()
        question = (bool(term) and term in "？?" and not _tentative(masked)) or bool(re.search(r"[吗呢]\s*$", masked))
        for clause in _mark_reported(_sentence_clauses(masked, original, index, lexicon)):
            yield clause, question


def _tentative(sentence: str) -> bool:
    """'…应该几乎不占显存了吧？' asserts with doubt: a hedge or 吧, and no question word, 吗 or A-not-A."""
    question = rf"{WH_QUESTION}|吗|是不是|能不能|会不会|可不可以|有没有|为什么|怎么|多少|{en_words('why', 'how')}"
    if re.search(question, sentence, re.I):
        return False
    return bool(re.search(TENTATIVE, sentence, re.I))


def _continues_list(piece: str, cues: list[Cue]) -> bool:
    """A piece that only names objects ('gradients and optimizer states') continues the list before it."""
    objects = [c for c in cues if c.kind == "object"]
    rest = "".join(ch for i, ch in enumerate(piece) if not any(c.start <= i < c.end for c in objects))
    joiners = r"(?:and|or|以及|和|与|及|、|the|\W)"
    return bool(objects) and len(objects) == len(cues) and not re.sub(joiners, "", rest, flags=re.I)


def _sentence_clauses(masked: str, original: str, index: int, lexicon: Lexicon) -> list[Clause]:
    """The clauses of one sentence, each scanned; a parenthetical remark follows its clause."""
    whole, out = scan(masked, lexicon), []
    for opener, piece, introduces in _clauses(masked):
        asides, main = _asides(piece), piece
        for m in asides:
            main = main[: m.start()] + " " * (m.end() - m.start()) + main[m.end() :]
        cues = scan(main, lexicon)
        last = out[-1] if out and not out[-1].aside else None
        if last and not opener and _continues_list(main, cues):  # 'partitions parameters, gradients and …'
            main = f"{last.text}, {main}"
            cues = scan(main, lexicon)
            out[-1] = Clause(main, original, last.opener, cues, whole, index, introduces=introduces)
        else:
            out.append(Clause(main, original, opener, cues, whole, index, introduces=introduces))
        for m in asides:
            host = next(
                (piece[c.start : c.end] for c in reversed(cues) if c.kind in HOST_KINDS and c.end <= m.start()), ""
            )
            for part in re.split(f"[{CLAUSE_PUNCT}]", m.group(1)):  # '(梯度和优化器状态分片，参数不 reshard)'
                text = f"{host} {part}".strip()
                out.append(Clause(text, original, "", scan(text, lexicon), whole, index, aside=True))
    return out


def _mark_reported(clauses: list[Clause]) -> list[Clause]:
    """Flag clauses that are not the student's assertion: reported beliefs, if-clauses, refuted claims.

    A reporting cue (有人以为/myth) covers the rest of the sentence until a contrast (其实/但/however);
    'contrary to …' covers only its own clause; '…，这是错误的' refutes the clause before it.
    """
    reported = False
    corrected = any(c.opener == "contrast" for c in clauses[1:])
    for i, clause in enumerate(clauses):
        if clause.opener in ("contrast", "replace_pos", "replace_neg"):
            reported = False
        reported = reported or bool(of(clause.cues, "attrib")) or corrected and bool(of(clause.cues, "impression"))
        clause.reported = reported or bool(of(clause.cues, "attrib_local"))
        clause.hypothetical = bool(of(clause.cues, "hypothetical"))
        if i and _is_refutation(clause):
            clauses[i - 1].reported = True
    return clauses


def _is_refutation(clause: Clause) -> bool:
    """A clause that only says the previous one is wrong (这是错误的 / this is false)."""
    content = of(clause.cues, "object", "volume", "subject", "op", "partition", "whole", "limit", "ratio", "same")
    return bool(of(clause.cues, "postneg")) and not content


def negations(clause: Clause, start: int, end: int) -> list[Cue]:
    """Negations in [start, end) that reach end: one closed by a when-phrase ('不做梯度累积时') stays in it."""
    whens = of(clause.cues, "when")
    return [
        n for n in between(clause.cues, "neg", start, end) if not any(n.end <= w.start and w.end <= end for w in whens)
    ]


def negated_after(clause: Clause, since: int, pred: Cue) -> bool:
    """Whether a negation governs a predicate: since the previous predicate, right after it, or a post-negator."""
    before = negations(clause, since, pred.start)
    after = re.match(AFTER_PREDICATE_NEG, clause.text[pred.end : pred.end + 6], re.I)
    post = between(clause.cues, "postneg", pred.end, len(clause.text) + 1)
    return (bool(before) or bool(after)) != bool(post)


def own_negation(clause: Clause) -> bool:
    """Polarity of an elliptic clause: any negation in it (or a replace-negative opener)."""
    neg = bool(of(clause.cues, "neg")) or clause.opener == "replace_neg"
    return neg != bool(of(clause.cues, "postneg"))


def is_elliptic(clause: Clause, predicate_kinds: tuple[str, ...]) -> bool:
    """A clause without its own predicate that borrows the previous one (激活也一样 / 其实不会 / 而是激活)."""
    if of(clause.cues, *predicate_kinds) or clause.introduces:
        return False
    bare = clause.text.strip(" 。，,.!！?？")
    names = bool(of(clause.cues, "object", "subject"))  # 'not activations' names what it replaces; 'not fast' does not
    return (
        (clause.opener in ("replace_pos", "replace_neg") or bool(re.match(r"^(?:不是|并非|not)\b", bare)))
        and names
        or bool(re.search(ELLIPSIS_END, bare, re.I))
        or bool(re.match(INCLUSION, bare, re.I))
        or bool(re.match(ANSWER, bare))
    )
