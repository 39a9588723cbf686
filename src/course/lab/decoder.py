"""A decoder-only transformer of a chosen size, built directly in BF16: the model of the one-GPU measurement.

Pre-norm blocks (RMSNorm, causal multi-head attention through scaled_dot_product_attention, a GELU MLP),
no biases, an untied LM head, so the parameter count has a closed form:

    Ψ = V·d (embedding) + L·(2d + 4d² + 2·d·f) (blocks) + d (final norm) + d·V (head)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class DecoderSpec:
    """Vocabulary V, width d, depth L, attention heads and MLP width f of the decoder."""

    name: str
    vocab: int
    d_model: int
    layers: int
    heads: int
    ffn: int

    def __post_init__(self):
        if min(self.vocab, self.d_model, self.layers, self.heads, self.ffn) < 1 or self.d_model % self.heads:
            raise ValueError(f"decoder {self.name!r}: sizes must be positive and heads must divide d_model, got {self}")

    @property
    def psi(self) -> int:
        """Ψ, the parameter count, from the closed form above."""
        d = self.d_model
        block = 2 * d + 4 * d * d + 2 * d * self.ffn
        return self.vocab * d + self.layers * block + d + d * self.vocab


# ≈1.34·10⁹ parameters (a GPT-style "1.3B"): static state 16Ψ ≈ 21 GB, fits one GPU with room for activations.
PRESETS = {
    "1.3b": DecoderSpec("1.3b", vocab=32000, d_model=2048, layers=24, heads=16, ffn=8192),
    "tiny": DecoderSpec("tiny", vocab=128, d_model=32, layers=2, heads=4, ffn=128),
}


class Block(nn.Module):
    """One pre-norm transformer block."""

    def __init__(self, spec: DecoderSpec, **factory):
        super().__init__()
        d = spec.d_model
        self.heads = spec.heads
        self.norm1 = nn.RMSNorm(d, **factory)
        self.qkv = nn.Linear(d, 3 * d, bias=False, **factory)
        self.out = nn.Linear(d, d, bias=False, **factory)
        self.norm2 = nn.RMSNorm(d, **factory)
        self.up = nn.Linear(d, spec.ffn, bias=False, **factory)
        self.down = nn.Linear(spec.ffn, d, bias=False, **factory)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Decoder(nn.Module):
    """Token embedding, L blocks, final norm and LM head."""

    def __init__(self, spec: DecoderSpec, *, device: torch.device, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed = nn.Embedding(spec.vocab, spec.d_model, **factory)
        self.blocks = nn.ModuleList(Block(spec, **factory) for _ in range(spec.layers))
        self.norm = nn.RMSNorm(spec.d_model, **factory)
        self.head = nn.Linear(spec.d_model, spec.vocab, bias=False, **factory)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
