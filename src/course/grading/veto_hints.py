"""Hints for graders: sentences of a short answer that look like one of lesson 5's 一票否决项.

A hint never decides anything; it points a human grader at a sentence worth a second look.
The detector is a small rule-based reader for Chinese, English and mixed answers:

1. the answer is cut into sentences and clauses (at commas, colons and before contrast or
   causal connectives such as 但/其实/而/所以/however/because);
2. each clause is scanned with the lexicons below into cues (stage mentions, sharded objects,
   shard verbs, negations, volumes, collectives, comparison words ...), longest/earliest
   lexicon first, a span taken by an earlier entry not reused by a later one;
3. claims are read off the cues — "stage S shards object O" with its polarity, "entity E moves
   vΨ per step", "A's volume is r×B's", "memory tends to zero" — resolving ellipsis
   (激活也一样 / 其实不会 / 而是激活) and carrying the topic stage between clauses;
4. each claim is checked against the facts of the lesson (the tables below); a mismatch is a hint.

Claims inside quotes, in the scope of a reported misconception (有人以为/误区/myth ...) or in an
if-clause are not the student's own assertions and give no hint; an interrogative sentence
asserts nothing, but a bare answer right after a yes/no question (能否…？不能。) does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable

VETO_IDS = ("shard-target", "activation-shard", "comm-volume", "unbounded-scaling")


@dataclass(frozen=True)
class VetoHint:
    """One sentence that looks like a veto item, with why, for a human grader to judge."""

    veto_id: str
    question: str | None
    sentence: str
    reason: str


# ---------------------------------------------------------------------------------------------
# Facts of the lesson
# ---------------------------------------------------------------------------------------------

MODEL_STATE = frozenset({"param", "grad", "opt"})
SHARDED_BY_STAGE = {
    0: frozenset(),
    1: frozenset({"opt"}),
    2: frozenset({"opt", "grad"}),
    3: frozenset({"opt", "grad", "param"}),
}
STAGE_VOLUME = {0: 2.0, 1: 2.0, 2: 2.0, 3: 3.0}  # per-step volume in units of Ψ
OP_VOLUME = {"all-reduce": 2.0, "reduce-scatter": 1.0, "all-gather": 1.0}
PHASE_VOLUME = {("forward", 3): {1.0}, ("backward", 3): {1.0, 2.0}}
BASELINE_STAGE = 0  # "通信量翻倍/不变" without a second party compares with naive DP
QUESTION_STAGES = {"Q2": frozenset({1, 2}), "Q3": frozenset({3})}

STAGE_NAMES = {0: "朴素 DP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}
OBJECT_NAMES = {"param": "参数", "grad": "梯度", "opt": "优化器状态", "act": "激活"}

# ---------------------------------------------------------------------------------------------
# Lexicons. Scanned in this order; a span matched by an earlier entry is not reused by later ones.
# Each entry: (cue kind, regex, value). A value of None means "parse it from the match"
# (see _cue_value). Patterns are case-insensitive unless marked (?-i:...).
# ---------------------------------------------------------------------------------------------

_NUM = r"(?:\d+(?:\.\d+)?|[一两二三四五六]|半)"
_EN = r"(?<![A-Za-z])"  # an English word starts here
_NE = r"(?![A-Za-z])"  # ... and ends here


def _words(*words: str) -> str:
    """English words (regex fragments) as whole words, never inside a longer word."""
    return rf"{_EN}(?:{'|'.join(words)}){_NE}"


LEXICON: tuple[tuple[str, str, object], ...] = (
    # reported speech: someone else's (mis)belief, not the student's assertion
    ("attrib_local", r"contrary to[^,，;；]*|与(?:常见)?(?:说法|看法|误解|直觉)相反", True),
    ("attrib", r"(?:有人|有些人|有的人|很多人|不少人|许多人|一些人|部分人|常有人|别人)(?:以为|认为|说|觉得|声称|相信)|误以为|误认为"
     r"|常见(?:的)?(?:误区|误解|错误|说法)|(?:有|有一种|一种|有些)(?:说法|观点|看法)(?:认为|是)?|误区|所谓|据说"
     rf"|{_EN}some(?:one| people)?\s+(?:think|believe|claim|say)s?|{_EN}(?:myth|misconception){_NE}"
     r"|people often (?:think|believe)|it is often (?:said|claimed)", True),
    ("postneg", r"是(?:一种)?(?:错的|错误的|不对的|误解|谣言|不可能的)|不对|不成立|不正确|不可能|做不到"
     r"|is (?:wrong|false|incorrect|mistaken|a myth|a misconception)|(?:is )?not true", True),
    ("same", r"不变|没变(?!多|少|大|小)|没有变化|相同|一样|相等|持平|等同|"
     rf"{_EN}(?:same|identical|unchanged|equal)(?:\s+(?:as|to))?{_NE}", True),
    # communication volumes
    ("volume", rf"(?P<c>{_NUM})\s*(?:倍|×|x|times)\s*(?:的)?\s*(?:参数量|模型大小|参数规模"
     r"|(?:the\s+)?(?:parameter count|model size|number of parameters))"
     rf"|(?:参数量|模型大小|参数规模)的\s*(?P<c2>{_NUM})\s*倍", None),
    ("volume", rf"(?:(?P<c>{_NUM})\s*(?:[×x*·]\s*)?)?\$?\s*(?:\\Psi|Ψ|ψ|Φ|φ|{_EN}psi{_NE}"
     r"|(?-i:(?<![A-Za-z])K(?![A-Za-z])))(?:\s*/\s*(?P<div>\d+)(?![\d.]))?", None),
    ("ratio", rf"(?P<c>\d+(?:\.\d+)?|[一两二三四])\s*(?:倍|x{_NE}|×)|翻倍|加倍|{_EN}doubl(?:e|es|ed){_NE}"
     rf"|twice(?=\s+(?:as|that|the|of))|一半|减半|{_EN}half{_NE}|{_EN}halved{_NE}", None),
    ("percent", r"(?P<c>\d+(?:\.\d+)?)\s*%", None),
    ("distributive", rf"各(?!\s*(?:自|个|卡|层|张|rank|副本|阶段|DP))|{_EN}(?:each|apiece){_NE}", True),
    ("count", rf"两次|2\s*次|{_EN}twice{_NE}|{_EN}two(?=\s+(?:all|reduce))", 2),
    # who is speaking about what
    ("stage", r"(?<![A-Za-z])(?:ZeRO|Z)[\s\-‐–_]*(?:stage[\s\-_]*)?(?P<d>[0-3](?:\s*[/、&]\s*[0-3])*)"
     r"(?![\d.])", None),
    ("stage", r"FSDP", frozenset({3})),
    ("stage", rf"{_EN}DDP|朴素\s*(?:DP|DDP|数据并行)|{_EN}(?:naive|vanilla|plain)\s+(?:DP|DDP|data[\s-]parallel\w*)",
     frozenset({0})),
    ("zero_agent", r"(?-i:ZeRO)|DeepSpeed", True),
    ("other_agent", r"张量并行|序列并行|上下文并行|流水线并行|(?-i:(?<![A-Za-z])(?:TP|SP|CP|PP)(?![A-Za-z]))"
     r"|(?:tensor|sequence|context|pipeline)[\s-]parallel\w*|Megatron|Ulysses|ring[\s-]attention"
     r"|重计算|recomput\w*|checkpointing|序列维|sequence dimension", True),
    ("op", r"all[\s\-_]?reduce\w*|全规约|全归约", "all-reduce"),
    ("op", r"reduce[\s\-_]?scatter\w*|(?-i:(?<![A-Za-z])RS(?![A-Za-z]))", "reduce-scatter"),
    ("op", r"all[\s\-_]?gather\w*|(?-i:(?<![A-Za-z])AG(?![A-Za-z]))", "all-gather"),
    ("phase", rf"前向|{_EN}forward{_NE}|{_EN}fwd{_NE}", "forward"),
    ("phase", rf"反向|{_EN}backward{_NE}|{_EN}bwd{_NE}", "backward"),
    # what is (not) sharded
    ("object", r"优化器(?:状态)?|Adam\s*(?:状态|states?)|动量|方差|master\s*(?:权重|weights?)|主权重"
     rf"|{_EN}optimi[sz]er(?:[\s-]+states?)?|{_EN}momentum|{_EN}variance", "opt"),
    ("object", r"模型状态|model[\s-]*states?", "state"),
    ("object", rf"参数(?!量|规模|个数)|权重|{_EN}weights?{_NE}|{_EN}param(?:eter)?s?{_NE}(?!\s*count)", "param"),
    ("object", rf"梯度|{_EN}grad(?:ient)?s?{_NE}", "grad"),
    ("object", rf"激活|{_EN}activations?{_NE}", "act"),
    ("static", r"静态|状态显存|" + _words("static"), True),
    ("total", r"总显存|全部显存|所有显存|总内存|训练显存|运行时|包括激活|含激活|"
     + _words("total", "overall", "runtime", "including activations"), True),
    ("exclusion", r"除外|除了|不含|不包括|之外|" + _words("excluding", "except", "apart from"), True),
    ("memory", r"显存|内存|占用|" + _words("memory", "footprint"), True),
    ("keep", rf"全量(?!分片)|完整|一整份|整份|每(?:张)?卡(?:都)?(?:有|存|保留|保存)?一份|{_EN}full{_NE}(?![\s-]*shard)"
     rf"|{_EN}(?:complete|entire|whole){_NE}|{_EN}replicat(?:e|es|ed){_NE}|{_EN}replicas?{_NE}", False),
    ("fraction", r"1\s*/\s*N(?:_?\{?d\}?)?|/\s*N_?\{?d\}?|N_?d\s*份", True),
    ("shard", r"分片|切片|切分|切开|切成|切割|分割|拆分|均分|平分|平摊|分摊|分散到|分布到|分到|分掉|划分|分给|切掉|切(?![换入出])"
     r"|" + _words(r"shard(?:s|ed|ing)?", r"partition(?:s|ed|ing)?", r"split(?:s|ting)?",
                   r"slic(?:e|es|ed|ing)", r"distribut(?:e|es|ed|ing)\s+(?:across|among|over)",
                   r"spread\s+(?:across|over)", r"divid(?:e|es|ed|ing)\s+(?:across|among|by)"), True),
    ("temporal", r"临时|瞬时|按需|拼出|拼回|拼合|拼成|补全|gather|即用即弃|用完|计算(?:某层)?时"
     r"|temporar\w*|on[\s-]demand|briefly|materiali[sz]\w*", True),
    ("storage", r"常驻|保存|保留|持有|存储|只存|(?<![显内])存(?!在)|" + _words("keeps?", "holds?", "stores?", "resident"), True),
    ("usage", r"只需要?|需要|拿到|得到|接收|收到|使用|负责|聚合|归约|更新|"
     + _words("needs?", "receives?", "gets?", "obtains?", "uses?", "updates?"), True),
    ("incremental", rf"不仅|不但|不只|不光|不止|{_EN}not only{_NE}|多(?=[^，,。]{{0,3}}(?:分片|切|拆))", True),
    ("only", rf"只有|只是|只会|只能|仅仅|只|仅|{_EN}only{_NE}|{_EN}just{_NE}|{_EN}merely{_NE}", True),
    ("incremental", rf"还|也|再|又|额外|进一步|{_EN}(?:also|additionally|further|too|as well){_NE}", True),
    # memory scaling
    ("zero", r"(?:趋|接|逼)(?:近|向|于)(?:于)?\s*(?:0|零)|(?:降|减|缩)(?:低|少|小)?(?:到|至|为)\s*(?:0|零)(?![.\d])"
     r"|(?:降|减|缩)?(?:低|少|小)?(?:到|至)?\s*任意(?:低|小)|无限(?:降低|下降|减少|缩小|小|低)|归零|[→>]\s*0(?![.\d])"
     rf"|{_EN}arbitrar(?:y|ily){_NE}(?!\s+(?:large|long|big))|(?:goes|go|drops?|falls?|shrinks?|tends?|approach(?:es)?)"
     r"\s+(?:to\s+)?zero|(?:to|towards?) zero|vanish\w*|unbounded|without (?:limit|bound)", True),
    ("capacity", r"任意(?:大|长)的?\s*(?:模型|序列|上下文|context)|任意(?:规模|长度)|再(?:大|长)的(?:模型|序列)"
     r"|" + _words(r"any (?:model|sequence length|size)", r"arbitrar(?:y|ily) (?:large|long|big)"), True),
    ("scale", r"N_?\{?d\}?\s*(?:→|->|趋于|趋向|趋近于?)\s*(?:∞|无穷)|∞|无穷|无限多|足够多|够多|加卡|不断加"
     r"|scale[\s-]?out|infinite\w*|(?:enough|more)\s+(?:GPUs|ranks|devices)|as N_?d (?:grows|increases)", True),
    ("comm", r"通信|通讯|传输|收发|带宽|" + _words(r"communicat\w*", "traffic", "volume", "bandwidth", "moves?",
                                             "sends?", "transfers?"), True),
    ("speed", r"快|慢|耗时|时间|延迟|吞吐|效率|" + _words("faster", "slower", "latency", "time", "throughput"), True),
    # comparison and totals
    ("more", rf"更多|更大|更高|变多|增多|增加|增大|增长|升至|多出来的|多出|多|大|高|{_EN}(?:more|larger|higher|greater|bigger){_NE}"
     rf"|{_EN}increase[sd]?{_NE}|{_EN}extra{_NE}|{_EN}additional{_NE}", True),
    ("less", rf"更少|更小|更低|减少|降低|少|{_EN}(?:less|fewer|smaller|lower){_NE}|{_EN}decrease[sd]?{_NE}", True),
    ("total_marker", r"一共|总共|共计|合计|总计|总量|总通信量|加起来|共|=|等于|" + _words("in total", "altogether", "sum"),
     True),
    ("from", r"从|" + _words("from"), True),
    ("to", r"(?:到|至|为)|(?<![A-Za-z])to(?![A-Za-z])", True),
    ("hypothetical", rf"如果|假如|假设|倘若|要是|若|{_EN}if{_NE}|{_EN}suppose{_NE}", True),
    ("neg", r"不(?!仅|但|只|光|同|少|断|过|管|论|久|止|一样|例外)|没有?|无法|并非|而非|绝非|未(?!来)|别|无(?!限|穷|论|关|需)"
     rf"|{_EN}(?:not(?!\s+only)|no|never|cannot|none|neither|nor|without){_NE}|n't", True),
)

# Clause boundaries: punctuation, and connectives that open a new clause.
CLAUSE_PUNCT = "，,：:"
SENTENCE_PUNCT = "。！？!?；;\n"
QUOTE_PAIRS = {"“": "”", "「": "」", "『": "』", '"': '"'}
CONTRAST = (r"但是|但|然而|其实|实际上|事实上|不过|可是|可惜|却|反而|相反|(?<![从因然进反继])而(?![且言])|"
            + _words("however", "but", "whereas", "while", "actually", "in fact", "rather", "instead", "yet"))
CAUSAL = (r"所以|因此|因而|从而|于是|因为|由于|故而|"
          + _words("so", "therefore", "thus", "hence", "because", "since", "which is why"))
CONNECTIVES = (("contrast", CONTRAST), ("causal", CAUSAL))
REPLACE_OPENERS = (("replace_neg", r"^(?:而|but\s+)?(?:不是|并非|非|rather than|instead of|not)"),
                   ("replace_pos", r"^而是|^(?:but\s+)?rather\b"))
ELLIPSIS_END = (r"(?:能|可以|可|会|行|是|也一样|也是一样|同样|如此|亦然|也是|不例外|包括在内|"
                + _words("can", "cannot", "can't", "does", "doesn't", "do", "don't", "will", "won't", "is", "isn't",
                         "are", "aren't", "too", "as well", "either", "likewise", "included")
                + r")\s*(?:的|了|呢|啊|not)?\s*$")
ANSWER = r"^\s*(?:答案是|答：|回答是)?\s*(?:绝对|当然|肯定|并)?\s*(?:不|没)?\s*(?:能|可以|会|行|是的?|对)\s*(?:的|了)?\s*$"
COMPARATIVE_BEFORE = (r"(?:比|相比于?|相较于?|较之?|对比|不同于|区别于|像|如同|同(?!样)|than|compared\s+(?:to|with)"
                      r"|versus|vs\.?|over|like|unlike|from|as)\s*$")
COMPARATIVE_AFTER = r"^\s*(?:的)?\s*(?:基础上|之上|相比|相较|比较|比起来)"
RATIO_TARGET_BEFORE = r"(?:比|是|为|与|和|跟|同|较|相比于?|对比|than|of|to|as|with)\s*(?:的)?\s*$"
GROUP_JOINER = r"^\s*(?:和|与|及|以及|、|/|,|&|或|跟|and|or)\s*$"
AFTER_PREDICATE_NEG = r"^\s*(?:的)?\s*(?:不了|不到|不开|不是|并非|而非|非|neither|nor|no\b)"


@dataclass(frozen=True)
class Cue:
    """A lexicon match in a clause: its kind, parsed value and span."""

    kind: str
    value: object
    start: int
    end: int


@dataclass(frozen=True)
class Frame:
    """What a later elliptic clause can inherit: the last predicate and its objects."""

    objects: frozenset[str] = frozenset()
    shard_base: bool | None = None  # True: shard verb, False: keep-full, None: none seen
    zero: bool = False


@dataclass
class Context:
    """Discourse state carried from clause to clause while reading one answer."""

    question: str | None
    topic: frozenset[int] | None = None
    agent: str = "zero"
    frame: Frame = field(default_factory=Frame)
    last_ops: tuple[str, ...] = ()


@dataclass
class Clause:
    """One clause with its cues and the flags that decide whether it is an assertion."""

    text: str
    sentence: str
    masked_sentence: str
    opener: str
    cues: list[Cue]
    reported: bool = False
    hypothetical: bool = False


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
            chars[i + 1:j] = " " * (j - i - 1)
            i = j
        i += 1
    return "".join(chars)


def _top_level(text: str) -> list[bool]:
    """For each position, whether it is outside parentheses (nothing is cut inside them)."""
    depth, flags = 0, []
    for ch in text:
        depth = depth + 1 if ch in "（(" else max(0, depth - 1) if ch in "）)" else depth
        flags.append(depth == 0)
    return flags


def _sentence_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, terminator) of each sentence; a '.' ends a sentence only before space/end."""
    spans, start = [], 0
    for i, (ch, top) in enumerate(zip(text, _top_level(text))):
        period = ch == "." and (i + 1 == len(text) or text[i + 1].isspace()) and not re.search(
            r"(?:e\.g|i\.e|vs|etc)$", text[start:i])
        if top and (ch in SENTENCE_PUNCT or period):
            spans.append((start, i, ch))
            start = i + 1
    spans.append((start, len(text), ""))
    return [(a, b, t) for a, b, t in spans if text[a:b].strip()]


def _cut_points(sentence: str) -> dict[int, str]:
    """Position where a new clause starts → the connective kind that opens it ('' after punctuation)."""
    top = _top_level(sentence)
    cuts = {i + 1: "" for i, ch in enumerate(sentence) if ch in CLAUSE_PUNCT and top[i]}
    for kind, pattern in CONNECTIVES:
        for m in re.finditer(pattern, sentence, re.I):
            if m.start() > 0 and top[m.start()]:
                cuts[m.start()] = cuts.get(m.start()) or kind
    return cuts


def _clauses(sentence: str) -> list[tuple[str, str]]:
    """(opener kind, clause text) pieces of one sentence; '，但' opens a contrast clause."""
    cuts = _cut_points(sentence)
    bounds = sorted(cuts) + [len(sentence)]
    pieces, start, opener = [], 0, ""
    for pos in bounds:
        piece = sentence[start:pos].strip(" ，,：:")
        if piece:
            pieces.append((_opener(opener, piece), piece))
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


# ---------------------------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------------------------

_COMPILED = tuple((kind, re.compile(pattern, re.I), value) for kind, pattern, value in LEXICON)


def _scan(text: str) -> list[Cue]:
    """All lexicon cues of a clause; a span taken by an earlier lexicon entry is not reused.

    Patterns run on the unmasked text so their look-arounds see real neighbours (不仅 is not 不).
    """
    taken = [False] * len(text)
    cues = []
    for kind, pattern, value in _COMPILED:
        for m in pattern.finditer(text):
            if not m.group(0).strip() or any(taken[m.start():m.end()]):
                continue
            taken[m.start():m.end()] = [True] * (m.end() - m.start())
            cues.append(Cue(kind, _cue_value(kind, m) if value is None else value, m.start(), m.end()))
    return sorted(cues, key=lambda c: c.start)


_DIGITS = {"一": 1.0, "两": 2.0, "二": 2.0, "三": 3.0, "四": 4.0, "五": 5.0, "六": 6.0, "半": 0.5}


def _number(token: str | None, default: float) -> float:
    """A coefficient written with digits or a Chinese numeral."""
    if not token:
        return default
    return _DIGITS.get(token, None) or float(token)


def _cue_value(kind: str, m: re.Match) -> object:
    """Parse the value of cues whose lexicon entry has no constant value."""
    groups = m.groupdict()
    if kind == "stage":
        return frozenset(int(d) for d in re.findall(r"[0-3]", groups["d"]))
    if kind == "ratio":
        word = m.group(0).lower()
        if groups.get("c"):
            return _number(groups["c"], 1.0)
        return 0.5 if ("半" in word or "half" in word) else 2.0
    if kind == "percent":
        return float(groups["c"]) / 100
    return _number(groups.get("c") or groups.get("c2"), 1.0) / float(groups.get("div") or 1)  # volume


def _of(cues: Iterable[Cue], *kinds: str) -> list[Cue]:
    """Cues of the given kinds, in order."""
    return [c for c in cues if c.kind in kinds]


def _between(cues: Iterable[Cue], kind: str, start: int, end: int) -> list[Cue]:
    """Cues of one kind inside [start, end)."""
    return [c for c in cues if c.kind == kind and start <= c.start < end]


# ---------------------------------------------------------------------------------------------
# Reading clauses in context
# ---------------------------------------------------------------------------------------------


def _clauses_of(text: str) -> Iterable[tuple[Clause, bool]]:
    """Every clause of an answer, with whether its sentence is a question."""
    blanked = _blank_quotes(text)
    for start, end, term in _sentence_spans(blanked):
        masked, original = blanked[start:end], text[start:end].strip()
        question = bool(term) and term in "？?" or bool(re.search(r"[吗呢]\s*$", masked))
        for clause in _mark_reported(_sentence_clauses(masked, original)):
            yield clause, question


def _sentence_clauses(masked: str, original: str) -> list[Clause]:
    """The clauses of one sentence, each scanned."""
    return [Clause(piece, original, masked, opener, _scan(piece)) for opener, piece in _clauses(masked)]


def _mark_reported(clauses: list[Clause]) -> list[Clause]:
    """Flag clauses that are not the student's assertion: reported beliefs, if-clauses, refuted claims.

    A reporting cue (有人以为/myth) covers the rest of the sentence until a contrast (其实/但/however);
    'contrary to …' covers only its own clause; '…，这是错误的' refutes the clause before it.
    """
    reported = False
    for i, clause in enumerate(clauses):
        if clause.opener in ("contrast", "replace_pos", "replace_neg"):
            reported = False
        reported = reported or bool(_of(clause.cues, "attrib"))
        clause.reported = reported or bool(_of(clause.cues, "attrib_local"))
        clause.hypothetical = bool(_of(clause.cues, "hypothetical"))
        if i and _is_refutation(clause):
            clauses[i - 1].reported = True
    return clauses


def _is_refutation(clause: Clause) -> bool:
    """A clause that only says the previous one is wrong (这是错误的 / this is false)."""
    content = _of(clause.cues, "object", "volume", "stage", "op", "shard", "keep", "zero", "ratio", "same")
    return bool(_of(clause.cues, "postneg")) and not content


def _stage_groups(clause: Clause) -> list[tuple[frozenset[int], int, int, bool]]:
    """Coordinated stage mentions ('ZeRO-1 和 ZeRO-2') as (stages, start, end, comparative)."""
    groups: list[list] = []
    for cue in _of(clause.cues, "stage"):
        if groups and re.match(GROUP_JOINER, clause.text[groups[-1][2]:cue.start], re.I):
            groups[-1][0] = groups[-1][0] | cue.value
            groups[-1][2] = cue.end
        else:
            groups.append([cue.value, cue.start, cue.end])
    return [(s, a, b, bool(re.search(COMPARATIVE_BEFORE, clause.text[:a], re.I)
                          or re.match(COMPARATIVE_AFTER, clause.text[b:])))
            for s, a, b in groups]


def _subject(clause: Clause) -> frozenset[int] | None:
    """The first non-comparative stage group of a clause: what the clause is about."""
    return next((s for s, _, _, comp in _stage_groups(clause) if not comp), None)


def _stage_before(clause: Clause, pos: int, ctx: Context) -> frozenset[int] | None:
    """The nearest non-comparative stage group before a position, else the topic."""
    before = [s for s, a, _, comp in _stage_groups(clause) if a < pos and not comp]
    return before[-1] if before else ctx.topic


def _agent(clause: Clause, ctx: Context) -> str:
    """Who the clause says does the sharding: ZeRO (default in this lesson) or another technique."""
    if _of(clause.cues, "other_agent"):
        return "other"
    if _of(clause.cues, "stage", "zero_agent"):
        return "zero"
    return ctx.agent


def _flip(clause: Clause, since: int, pred: Cue) -> bool:
    """Whether a negation governs a predicate: since the previous predicate, right after it, or a post-negator."""
    before = _between(clause.cues, "neg", since, pred.start)
    after = re.match(AFTER_PREDICATE_NEG, clause.text[pred.end:pred.end + 6], re.I)
    post = _between(clause.cues, "postneg", pred.end, len(clause.text) + 1)
    return (bool(before) or bool(after)) != bool(post)


def _own_negation(clause: Clause) -> bool:
    """Polarity of an elliptic clause: any negation in it (or a replace-negative opener)."""
    neg = bool(_of(clause.cues, "neg")) or clause.opener == "replace_neg"
    return neg != bool(_of(clause.cues, "postneg"))


def _is_elliptic(clause: Clause) -> bool:
    """A clause without its own predicate that borrows the previous one (激活也一样 / 其实不会 / 而是激活)."""
    if _of(clause.cues, "shard", "keep", "fraction", "zero", "capacity"):
        return False
    bare = clause.text.strip(" 。，,.!！?？")
    return (clause.opener in ("replace_pos", "replace_neg") or bool(re.search(ELLIPSIS_END, bare, re.I))
            or bool(re.match(ANSWER, bare)) or bool(re.match(r"^(?:不是|并非|not)\b", bare)))


# ---------------------------------------------------------------------------------------------
# Claims: sharding
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardClaim:
    """'stages shard (or keep whole) these objects', as asserted by one predicate."""

    stages: frozenset[int] | None
    objects: frozenset[str]
    sharded: bool
    exclusive: bool
    agent: str


def _predicates(clause: Clause) -> list[Cue]:
    """Shard/keep/fraction predicates that state how things are stored."""
    temporal = bool(_of(clause.cues, "temporal"))
    storage = bool(_of(clause.cues, "storage"))
    preds = []
    for cue in _of(clause.cues, "shard", "keep", "fraction"):
        if cue.kind == "keep" and temporal:
            continue
        if cue.kind != "keep" and _between(clause.cues, "usage", 0, cue.start) and not storage:
            continue
        preds.append(cue)
    return preds


def _objects_of(cues: Iterable[Cue]) -> frozenset[str]:
    """Object names, with 模型状态 expanded to parameters, gradients and optimizer states."""
    names: set[str] = set()
    for cue in _of(cues, "object"):
        names |= MODEL_STATE if cue.value == "state" else {cue.value}
    return frozenset(names)


def _assign_objects(preds: list[Cue], objects: list[Cue]) -> dict[Cue, list[Cue]]:
    """Give each object to the nearest predicate (by character distance)."""
    owned: dict[Cue, list[Cue]] = {p: [] for p in preds}
    for obj in objects:
        nearest = min(preds, key=lambda p: max(p.start - obj.end, obj.start - p.end, 0))
        owned[nearest].append(obj)
    return owned


def _exclusive(clause: Clause, pred: Cue, prev_end: int) -> bool:
    """'只分片 X' with no 还/也/再: the predicate claims X is all this stage shards."""
    if pred.kind != "shard" or _of(clause.cues, "incremental"):
        return False
    only = _between(clause.cues, "only", prev_end, pred.start) + _between(clause.cues, "only", pred.end, pred.end + 4)
    return bool(only) and not _between(clause.cues, "storage", prev_end, pred.start)


def _shard_claims(clause: Clause, ctx: Context) -> list[ShardClaim]:
    """The sharding claims a clause makes, inheriting an elided predicate or object if needed."""
    agent = _agent(clause, ctx)
    preds = _predicates(clause)
    if not preds:
        if ctx.frame.shard_base is None or not _is_elliptic(clause):
            return []
        objects = _objects_of(clause.cues) or ctx.frame.objects
        sharded = ctx.frame.shard_base != _own_negation(clause)
        return [ShardClaim(_subject(clause) or ctx.topic, objects, sharded, False, agent)] if objects else []
    claims, prev_end = [], 0
    for pred, objs in _assign_objects(preds, _of(clause.cues, "object")).items():
        inherits = len(preds) == 1 and pred.kind == "shard"  # 'ZeRO 无法分片它': the object is elided
        objects = _objects_of(objs) or (ctx.frame.objects if inherits else frozenset())
        sharded = (pred.kind != "keep") != _flip(clause, prev_end, pred)
        claims.append(ShardClaim(_stage_before(clause, pred.start, ctx), objects, sharded,
                                 _exclusive(clause, pred, prev_end), agent))
        prev_end = pred.end
    return [c for c in claims if c.objects]


def _check_shard(claim: ShardClaim) -> list[tuple[str, str]]:
    """Compare a sharding claim with what each ZeRO stage really shards."""
    found = []
    if "act" in claim.objects and claim.sharded and claim.agent == "zero":
        found.append(("activation-shard", "此句说 ZeRO/FSDP 分片激活；激活在各 DP rank 上互不相同，没有冗余可分片"))
    for stage in sorted(claim.stages or ()):
        truth = SHARDED_BY_STAGE[stage]
        for obj in sorted(claim.objects & MODEL_STATE):
            if (obj in truth) != claim.sharded:
                verb = "不分片" if claim.sharded else "分片"
                found.append(("shard-target", f"{STAGE_NAMES[stage]} {verb}{OBJECT_NAMES[obj]}，此句说法相反"))
        missing = truth - claim.objects
        if claim.exclusive and claim.sharded and missing:
            names = "、".join(OBJECT_NAMES[o] for o in sorted(missing))
            found.append(("shard-target", f"此句说 {STAGE_NAMES[stage]} 只分片这些对象，但它还分片{names}"))
    return found


# ---------------------------------------------------------------------------------------------
# Claims: communication volume
# ---------------------------------------------------------------------------------------------


def _is_comm(clause: Clause) -> bool:
    """The clause talks about communication (or inherits it from its sentence) and not only memory."""
    if _of(clause.cues, "comm", "op"):
        return True
    if _of(clause.cues, "memory") or _predicates(clause):
        return False
    return bool(_of(_scan(clause.masked_sentence), "comm", "op"))


def _skippable_volume(clause: Clause, vol: Cue) -> bool:
    """Memory fractions (2Ψ/N_d), approximations ((N_d-1)/N_d Ψ) and baselines (从 2Ψ …) are not claims."""
    after, before = clause.text[vol.end:vol.end + 3], clause.text[max(0, vol.start - 6):vol.start]
    if re.match(r"\s*/\s*N", after) or re.search(r"(?:N_?\{?d\}?|N|\))\s*$", before):
        return True
    froms = [c for c in _of(clause.cues, "from") if c.end <= vol.start]
    return bool(froms) and not _between(clause.cues, "to", froms[-1].end, vol.start)


def _role(clause: Clause, vol: Cue) -> str:
    """increment (多出 Ψ) / component (Ψ + Ψ) / total (共 2Ψ, = 3Ψ) / plain."""
    before, after = clause.text[max(0, vol.start - 6):vol.start], clause.text[vol.end:vol.end + 10]
    more = _between(clause.cues, "more", max(0, vol.start - 5), vol.start)
    if (more and not _between(clause.cues, "to", more[-1].end, vol.start)) or re.match(r"\s*more\b", after, re.I):
        return "increment"
    if re.match(r"\s*(?:\+|加|plus)", after, re.I) or re.search(r"(?:\+|加上?|plus)\s*$", before, re.I):
        return "component"
    if (_between(clause.cues, "total_marker", max(0, vol.start - 6), vol.start)
            or re.match(r"\s*(?:=|in total)", after, re.I)):
        return "total"
    return "plain"


def _entities(clause: Clause) -> list[tuple[str, object, int, int]]:
    """Stage groups, collectives and phases of a clause, in order: (kind, value, start, end)."""
    items = [("stage", s, a, b) for s, a, b, _ in _stage_groups(clause)]
    items += [(c.kind, c.value, c.start, c.end) for c in _of(clause.cues, "op", "phase")]
    return sorted(items, key=lambda e: e[2])


def _op_count(clause: Clause, op_start: int) -> float:
    """How many times a collective is said to run (两次 all-gather / all-gathers twice)."""
    near = _between(clause.cues, "count", max(0, op_start - 6), op_start + 40)  # 两次 X / X … twice
    return near[0].value if near else 1.0


def _accepted_for(clause: Clause, vol: Cue, ctx: Context) -> tuple[str, set[float]] | None:
    """What the volume is about and which values the lesson allows for it."""
    role = _role(clause, vol)
    if role == "total":
        return _total_binding(clause, vol, ctx)
    entity = _bound_entity(clause, vol)
    if entity is None and _between(clause.cues, "distributive", 0, vol.start) and ctx.last_ops:
        return "、".join(ctx.last_ops), _common({OP_VOLUME[o] for o in ctx.last_ops})
    if entity is None:
        return None if role == "component" else _stage_values(ctx.topic or _question_stages(ctx))
    kind, value, start, _ = entity
    if kind == "op":
        return value, {OP_VOLUME[value], OP_VOLUME[value] * _op_count(clause, start)}
    if kind == "phase":
        stages = _stage_before(clause, start, ctx) or frozenset()
        allowed = [PHASE_VOLUME[(value, s)] for s in stages if (value, s) in PHASE_VOLUME]
        return (f"{value} 阶段", allowed[0]) if allowed else None
    return _stage_values(value) if role == "plain" else None


def _bound_entity(clause: Clause, vol: Cue) -> tuple[str, object, int, int] | None:
    """The nearest entity before a volume, or a collective right after it ('Ψ 的 all-gather')."""
    follow = re.match(r"\s*(?:的|of)\s*", clause.text[vol.end:])
    nxt = [e for e in _entities(clause) if e[0] == "op" and e[2] >= vol.end]
    if follow and nxt and nxt[0][2] == vol.end + follow.end():
        return nxt[0]
    before = [e for e in _entities(clause) if e[3] <= vol.start]
    return before[-1] if before else None


def _total_binding(clause: Clause, vol: Cue, ctx: Context) -> tuple[str, set[float]] | None:
    """A total (共/总计/=) is about the clause's stage, else the collectives listed before it in the clause."""
    subject = _subject(clause)
    if subject:
        return _stage_values(subject)
    ops = [c for c in _of(clause.cues, "op") if c.end <= vol.start]
    if ops:
        return "所列集合通信之和", {sum(OP_VOLUME[c.value] * _op_count(clause, c.start) for c in ops)}
    return _stage_values(ctx.topic or _question_stages(ctx))


def _question_stages(ctx: Context) -> frozenset[int] | None:
    """The stages a question is about, used when an answer names none."""
    return QUESTION_STAGES.get(ctx.question or "")


def _common(values: set[float]) -> set[float]:
    """The one value all parties share, or nothing when they differ."""
    return values if len(values) == 1 else set()


def _stage_values(stages: frozenset[int] | None) -> tuple[str, set[float]] | None:
    """Per-step totals the lesson gives for a stage group."""
    if not stages:
        return None
    return "/".join(STAGE_NAMES[s] for s in sorted(stages)), _common({STAGE_VOLUME[s] for s in stages})


def _volume_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """Volumes (kΨ) that do not match the entity they are bound to."""
    found, prev_end = [], 0
    for vol in _of(clause.cues, "volume"):
        if _skippable_volume(clause, vol):
            prev_end = vol.end
            continue
        negated_before = bool(_between(clause.cues, "neg", prev_end, vol.start)) or clause.opener == "replace_neg"
        negated = negated_before != bool(_between(clause.cues, "postneg", vol.end, len(clause.text) + 1))
        prev_end = vol.end
        if _role(clause, vol) == "increment":
            found += _relation_hints(clause, ctx, ("diff", vol.value), negated)
            continue
        bound = _accepted_for(clause, vol, ctx)
        if bound is None:
            continue
        what, allowed = bound
        if (vol.value in allowed) == negated:
            found.append(("comm-volume", f"{what} 每步通信量应为 {_fmt(allowed)}，此句给出 {_fmt({vol.value})}"))
    return found


def _fmt(values: set[float]) -> str:
    """'2Ψ' / '1Ψ 或 2Ψ' for a reason string."""
    return " 或 ".join(f"{v:g}Ψ" for v in sorted(values)) or "（各档不同）"


def _relation(clause: Clause) -> tuple[str, float] | None:
    """The comparison a clause states: ratio r, same, more, less."""
    ratio, percent = _of(clause.cues, "ratio"), _of(clause.cues, "percent")
    more = [c for c in _of(clause.cues, "more") if not _counts_operations(clause, c)]
    less = _of(clause.cues, "less")
    if ratio:
        return ("ratio_more" if more else "ratio", ratio[0].value)
    if percent and (more or less):
        return ("ratio", 1 + percent[0].value if more else 1 - percent[0].value)
    if _of(clause.cues, "same"):
        return ("ratio", 1.0)
    if more:
        return ("more", 0.0)
    if less:
        return ("less", 0.0)
    return None


def _counts_operations(clause: Clause, cue: Cue) -> bool:
    """'多一次 all-gather / one more all-gather' counts collectives; it says nothing about volume."""
    ops = [c for c in _of(clause.cues, "op") if c.start >= cue.end]
    return bool(ops) and bool(re.match(r"^\s*(?:了|出)?\s*(?:一次|一个|1\s*次|an?|one)?\s*\S{0,4}\s*$",
                                       clause.text[cue.end:ops[0].start], re.I))


def _parties(clause: Clause, ctx: Context) -> tuple[frozenset | str, frozenset | str] | None:
    """(A, B) of 'A 是 B 的 r 倍 / A 比 B 多'; B is the party after 比/是/与/than/of.

    Stages are the parties; a collective is one only as the compared-with party or when no stage is
    named (reduce-scatter 是 all-reduce 的一半), not when it is the extra item (多一次 all-gather).
    """
    ents = [e for e in _entities(clause) if e[0] in ("stage", "op")]
    target = [e for e in ents if re.search(RATIO_TARGET_BEFORE, clause.text[:e[2]], re.I)]
    others = [e for e in ents if e not in target]
    if any(e[0] == "stage" for e in ents):
        others = [e for e in others if e[0] == "stage"]
    if not target and not others:
        return None
    a = others[0][1] if others else (ctx.topic or _question_stages(ctx))
    b = target[0][1] if target else (others[1][1] if len(others) > 1 else None)
    if b is None and isinstance(a, frozenset) and a != frozenset({BASELINE_STAGE}):
        b = frozenset({BASELINE_STAGE})
    return (a, b) if a is not None and b is not None else None


def _volume_of(party: frozenset | str) -> set[float]:
    """True per-step volumes of a party (a stage group or a collective)."""
    return {OP_VOLUME[party]} if isinstance(party, str) else {STAGE_VOLUME[s] for s in party}


def _holds(kind: str, value: float, a: float, b: float) -> bool:
    """Whether 'a relates to b' as stated."""
    if kind == "ratio":
        return abs(a - value * b) < 1e-9
    if kind == "ratio_more":
        return abs(a - value * b) < 1e-9 or abs(a - (value + 1) * b) < 1e-9
    if kind == "diff":
        return abs((a - b) - value) < 1e-9
    return a > b if kind == "more" else a < b


def _relation_hints(clause: Clause, ctx: Context, relation: tuple[str, float] | None,
                    negated: bool) -> list[tuple[str, str]]:
    """Check a stated comparison between two parties' volumes."""
    parties = _parties(clause, ctx) if relation else None
    if parties is None:
        return []
    kind, value = relation
    a, b = parties
    for va in _volume_of(a):
        for vb in _volume_of(b):
            if _holds(kind, value, va, vb) == negated:
                return [("comm-volume", f"{_name(a)}（{va:g}Ψ）与 {_name(b)}（{vb:g}Ψ）的通信量关系与此句所说不符")]
    return []


def _name(party: frozenset | str) -> str:
    """Readable name of a stage group or collective."""
    return party if isinstance(party, str) else "/".join(STAGE_NAMES[s] for s in sorted(party))


def _comparison_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'ZeRO-3 的通信量是 DDP 的两倍' style claims (no explicit kΨ needed)."""
    if _of(clause.cues, "speed") or not _entities(clause):
        return []
    if any(_role(clause, v) == "increment" for v in _of(clause.cues, "volume")):
        return []
    relation = _relation(clause)
    if relation is None:
        return []
    first = min((c.start for c in clause.cues if c.kind in ("ratio", "percent", "same", "more", "less")))
    negated = bool(_between(clause.cues, "neg", 0, first)) != bool(_of(clause.cues, "postneg"))
    return _relation_hints(clause, ctx, relation, negated)


# ---------------------------------------------------------------------------------------------
# Claims: unbounded scaling
# ---------------------------------------------------------------------------------------------


def _unbounded_hints(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """'显存随 N_d 降到任意低/0' about total memory (not just the static model states)."""
    zero, capacity = _of(clause.cues, "zero"), _of(clause.cues, "capacity")
    own = zero or capacity
    if own:
        negated = bool(_between(clause.cues, "neg", 0, own[0].start)) != bool(_of(clause.cues, "postneg"))
    elif ctx.frame.zero and _is_elliptic(clause):  # 静态显存趋于 0，激活也一样
        negated = _own_negation(clause)
    else:
        return []
    if negated:
        return []
    if zero and not capacity and not _of(_scan(clause.masked_sentence), "memory", "total", "static"):
        return []
    total = bool(_of(clause.cues, "total")) or ("act" in _objects_of(clause.cues) and not _of(clause.cues, "exclusion"))
    objects = _objects_of(clause.cues)
    static = bool(_of(clause.cues, "static")) or bool(objects) and objects <= MODEL_STATE
    if static and not total and not capacity:
        return []
    return [("unbounded-scaling", "此句说显存随 N_d 可降到任意低/0；只有静态模型状态 16Ψ/N_d 趋于 0，"
                                  "激活与运行时显存不随 N_d 下降")]


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def _frame_after(clause: Clause, ctx: Context) -> Frame:
    """The predicate frame an elliptic follower of this clause would borrow: the latest predicate."""
    preds = _predicates(clause)
    objects = _objects_of(clause.cues) or ctx.frame.objects
    zero = bool(_of(clause.cues, "zero", "capacity"))
    if preds or zero:
        return Frame(objects, preds[-1].kind != "keep" if preds else None, zero)
    return replace(ctx.frame, objects=objects)


def _read_clause(clause: Clause, ctx: Context) -> list[tuple[str, str]]:
    """All veto findings of one asserted clause."""
    found: list[tuple[str, str]] = []
    if not clause.hypothetical:
        for claim in _shard_claims(clause, ctx):
            found += _check_shard(claim)
        if _is_comm(clause):
            found += _volume_hints(clause, ctx) + _comparison_hints(clause, ctx)
    return found + _unbounded_hints(clause, ctx)


def _advance(clause: Clause, ctx: Context) -> None:
    """Update the topic stage, agent and predicate frame after reading a clause."""
    subject = _subject(clause)
    if subject:
        ctx.topic = subject
    if _of(clause.cues, "other_agent") or _of(clause.cues, "stage", "zero_agent"):
        ctx.agent = _agent(clause, ctx)
    ctx.frame = _frame_after(clause, ctx)
    ops = tuple(c.value for c in _of(clause.cues, "op"))
    ctx.last_ops = ops or ctx.last_ops


def find_veto_hints(text: str, question: str | None = None) -> list[VetoHint]:
    """Sentences of a student's answer that look like a veto item (hints for a grader, not verdicts)."""
    ctx = Context(question)
    hints: dict[tuple[str, str], VetoHint] = {}
    for clause, interrogative in _clauses_of(text):
        if not (interrogative or clause.reported):  # a question's predicate still frames a bare answer (能否…？不能)
            for veto_id, reason in _read_clause(clause, ctx):
                hints.setdefault((veto_id, clause.sentence), VetoHint(veto_id, question, clause.sentence, reason))
        _advance(clause, ctx)
    return list(hints.values())
