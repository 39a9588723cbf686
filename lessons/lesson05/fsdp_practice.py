"""Numbers of lesson 5 beyond course.lab.formulas: the Llama-2-70B shape, FSDP2's reduce dtype, HSDP, ZeRO++,
offload, checkpointing, the public data-parallel benchmark §6 cites, and the rounding the page prints numbers with.

Each is the accounting of the lesson's §2–§3 (course.lab.formulas) applied to a setting the text describes; the
lesson's `output: asis` cells print them, so no number on the page is typed by hand, and
tests/lesson_content/test_lesson05_fsdp_practice.py and test_lesson05_numbers.py recompute them on the built pages.
Bytes unless a name says elements; GB = 10^9 bytes, GiB = 2^30 bytes (a card's capacity is quoted in GiB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from course.lab.formulas import GRAD_BYTES, PARAM_BYTES, comm_breakdown, comm_elements, memory_bytes

GB = 10**9
GIB = 2**30
FP32_BYTES = 4
INT8_BYTES = 1
INT4_BYTES = Fraction(1, 2)
ADAM_STATE_BYTES = 8  # FP32 Adam m and v
# PCIe 4.0: 16 GT/s per lane, 128b/130b encoding; x16, one direction (bytes/s).
PCIE4_X16 = Fraction(16 * 10**9 * 16 * 128, 130 * 8)


@dataclass(frozen=True)
class DecoderShape:
    """A Llama-style decoder: GQA attention, SwiGLU MLP, RMSNorm, untied embedding and output head."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int

    def layer_params(self) -> int:
        """One decoder layer: Q and O (h×h), K and V (h × kv_heads·head_dim), three MLP matrices, two norms."""
        kv = self.kv_heads * (self.hidden // self.heads)
        return 2 * self.hidden * self.hidden + 2 * self.hidden * kv + 3 * self.hidden * self.ffn + 2 * self.hidden

    def params(self) -> int:
        """Ψ: every layer, the embedding and output head, the final norm."""
        return self.layers * self.layer_params() + 2 * self.vocab * self.hidden + self.hidden


# Llama 2 (Touvron et al. 2023, arXiv:2307.09288), 70B: 80 layers, h 8192, FFN 28672, 64 heads, 8 KV heads, vocab 32000.
LLAMA2_70B = DecoderShape(layers=80, hidden=8192, ffn=28672, heads=64, kv_heads=8, vocab=32000)


def approx_elements(psi: int, stage: int) -> Fraction:
    """The lesson's 2Ψ / 3Ψ: elements per rank per step with the ring's (N_d−1)/N_d taken as 1 (large N_d)."""
    ranks = 2
    return comm_elements(psi, ranks, stage) / Fraction(ranks - 1, ranks)


def approx_traffic_bytes(psi: int, stage: int, reduce_bytes: int = GRAD_BYTES) -> Fraction:
    """approx_elements in bytes: parameters gathered in BF16, gradients reduced in REDUCE_BYTES."""
    ranks = 2
    width = {"all_gather": PARAM_BYTES, "reduce_scatter": reduce_bytes, "all_reduce": reduce_bytes}
    moved = sum(width[kind] * n for kind, n in comm_breakdown(psi, ranks, stage).items())
    return moved / Fraction(ranks - 1, ranks)


def unit_transient_bytes(psi_unit: int, reduce_bytes: int = GRAD_BYTES) -> int:
    """Peak gathered state with prefetch: two units' BF16 parameters and two units' unsharded gradients."""
    return 2 * PARAM_BYTES * psi_unit + 2 * reduce_bytes * psi_unit


def zero3_traffic_bytes(psi: int, ranks: int, reduce_bytes: int = GRAD_BYTES) -> Fraction:
    """Bytes per rank per step of ZeRO-3 / FSDP: two BF16 all-gathers, one reduce-scatter in the reduce dtype."""
    one_pass = Fraction(ranks - 1, ranks) * psi
    return 2 * PARAM_BYTES * one_pass + reduce_bytes * one_pass


@dataclass(frozen=True)
class Hsdp:
    """HSDP on a 2-D mesh: shard within groups of `shard` ranks (a node), replicate across `replicas` groups."""

    psi: int
    shard: int
    replicas: int

    def memory(self) -> Fraction:
        """Static bytes per rank: ZeRO-3 over the shard group only, 16Ψ/G."""
        return memory_bytes(self.psi, self.shard, 3)

    def intra_elements(self) -> Fraction:
        """Elements per rank in the shard group (all-gather ×2, reduce-scatter): 3(G−1)/G·Ψ."""
        return comm_elements(self.psi, self.shard, 3)

    def inter_elements(self) -> Fraction:
        """Elements per rank across groups: all-reduce of its gradient shard Ψ/G over R replicas, 2(R−1)/R·Ψ/G."""
        return 2 * Fraction(self.replicas - 1, self.replicas) * Fraction(self.psi, self.shard)

    def node_egress_elements(self) -> Fraction:
        """Elements leaving one node per step: its G ranks' all-reduce traffic."""
        return self.shard * self.inter_elements()

    def flat_node_egress_elements(self) -> Fraction:
        """The same for FSDP over all G·R ranks on a topology-ordered ring (one ring edge leaves each node)."""
        return comm_elements(self.psi, self.shard * self.replicas, 3)


def zeropp_cross_node_fraction() -> Fraction:
    """ZeRO++'s cross-node volume over ZeRO-3's (paper's accounting, 16-bit baseline): qwZ, hpZ, qgZ."""
    forward_gather = Fraction(INT8_BYTES, PARAM_BYTES)  # qwZ: INT8 weights instead of 16-bit
    backward_gather = Fraction(0)  # hpZ: the backward all-gather stays inside the node
    gradients = Fraction(INT4_BYTES, GRAD_BYTES)  # qgZ: INT4 gradients instead of 16-bit
    return (forward_gather + backward_gather + gradients) / 3


def hpz_extra_bytes(psi: int, ranks_per_node: int) -> Fraction:
    """hpZ's secondary copy: the 16-bit parameters once more, sharded over the node's ranks."""
    return Fraction(PARAM_BYTES * psi, ranks_per_node)


@dataclass(frozen=True)
class Offload:
    """One GPU, parameters, gradients and optimizer states in host memory, parameters streamed per unit."""

    psi: int
    param_bytes: int  # bytes per parameter as stored on the host and copied to the GPU
    grad_bytes: int  # bytes per gradient copied back

    def host_bytes(self) -> int:
        """Host memory: parameters, gradients, FP32 optimizer state (master weight when the parameters are 16-bit)."""
        master = FP32_BYTES if self.param_bytes < FP32_BYTES else 0
        return (self.param_bytes + self.grad_bytes + master + ADAM_STATE_BYTES) * self.psi

    def to_gpu_bytes(self) -> int:
        """Host→GPU per step: the parameters in forward and again in backward (resharded after forward)."""
        return 2 * self.param_bytes * self.psi

    def to_host_bytes(self) -> int:
        """GPU→host per step: the gradients."""
        return self.grad_bytes * self.psi

    def seconds_on_pcie(self, bandwidth: Fraction = PCIE4_X16) -> Fraction:
        """Transfer time per step, both directions overlapping: the busier direction at BANDWIDTH bytes/s."""
        return Fraction(max(self.to_gpu_bytes(), self.to_host_bytes())) / bandwidth


ZERO_OFFLOAD_16BIT = "zero"  # ZeRO-Infinity's accounting: 16-bit parameters and gradients cross PCIe
FSDP2_FP32 = "fsdp2"  # FSDP2 CPUOffloadPolicy: FP32 shards copied before the cast, FP32 gradient shards copied back


def offload(psi: int, kind: str) -> Offload:
    """The two offload accountings the lesson compares."""
    if kind == ZERO_OFFLOAD_16BIT:
        return Offload(psi, PARAM_BYTES, GRAD_BYTES)
    if kind == FSDP2_FP32:
        return Offload(psi, FP32_BYTES, FP32_BYTES)
    raise ValueError(f"unknown offload accounting {kind!r}; expected {ZERO_OFFLOAD_16BIT!r} or {FSDP2_FP32!r}")


def checkpoint_bytes(shape: DecoderShape, batch: int, seq: int) -> int:
    """Full activation checkpointing: each layer keeps only its BF16 input, b·s·h values."""
    return shape.layers * batch * seq * shape.hidden * PARAM_BYTES


# Training FLOPs per token: forward 2Ψ, backward 4Ψ; full recomputation adds one forward.
RECOMPUTE_FLOPS_FACTOR = Fraction(2 + 4 + 2, 2 + 4)


# The Ultra-Scale Playbook (Hugging Face, 2025), data-parallel scaling figure (plain DP, no sharding): the drop in
# tokens/s per GPU that the figure itself labels on each doubling, from DP = 8 to 256 (−6.3%, −6.0%, −12.0%, −15.0%,
# −40.6%), keyed by the DP size reached; and the rule of thumb from its ZeRO-3 prefetch passage,
# "DP shouldn't exceed 512".
PLAYBOOK_DP_DOUBLING_DROPS = tuple(
    (n, Fraction(d) / 100) for n, d in ((16, "6.3"), (32, "6.0"), (64, "12.0"), (128, "15.0"), (256, "40.6"))
)
PLAYBOOK_DP_RULE_OF_THUMB = 512


def fixed(value, digits: int) -> str:
    """VALUE to DIGITS decimals, halves rounded up (551.25 → 551.3) as a reader rounds, not to even as floats print."""
    scaled = math.floor(Fraction(value) * 10**digits + Fraction(1, 2))
    sign, whole = ("-" if scaled < 0 else ""), abs(scaled)
    text = str(whole).rjust(digits + 1, "0")
    return sign + (f"{text[:-digits]}.{text[-digits:]}" if digits else text)


def percent(share: Fraction) -> str:
    """A share as a whole percentage: 0.0638 → '6%'."""
    return f"{fixed(100 * share, 0)}%"


def gb(nbytes, digits: int = 1) -> str:
    """Bytes as GB (10^9), as the lesson prints them."""
    return fixed(Fraction(nbytes) / GB, digits)


def gib(nbytes, digits: int = 1) -> str:
    """Bytes as GiB (2^30)."""
    return fixed(Fraction(nbytes) / GIB, digits)


def giga(elements, digits: int = 2) -> str:
    """A count in units of 10^9."""
    return fixed(Fraction(elements) / 10**9, digits)


def sci(x, digits: int = 1) -> str:
    """A large count in TeX scientific notation with DIGITS decimals in the mantissa: 2.1\\times 10^{9}."""
    mantissa, exponent = f"{float(Fraction(x)):.{digits}e}".split("e")
    return f"{mantissa}\\times 10^{{{int(exponent)}}}"
