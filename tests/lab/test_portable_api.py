"""The lab uses only torch.distributed names that torch 2.4 already has, and counts every collective it calls.

The names torch 2.4.0 defines are read from fixtures/torch-2.4-distributed-api.json (extracted from the
2.4.0 wheel by fixtures/extract_torch_api.py), so this runs without torch. An import inside
`try: ... except ImportError:` passes when one of its alternatives exists in torch 2.4.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB_SOURCES = sorted((ROOT / "src" / "course" / "lab").rglob("*.py"))
API = json.loads((Path(__file__).parent / "fixtures" / "torch-2.4-distributed-api.json").read_text("utf-8"))
OLDEST = {module: set(names) for module, names in API["modules"].items()}

# torch.distributed names the lab calls that move no model data (set-up, queries, the results' gather).
NOT_MEASURED = {
    "ProcessGroup",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "barrier",
    "gather_object",
}
COUNT_TEST = Path(__file__).parent / "test_count_comm.py"


@dataclass(frozen=True)
class Use:
    """One use of a torch.distributed name: where, which module, which name, and its alternatives if any."""

    where: str
    module: str
    name: str
    alternatives: tuple[tuple[str, str], ...] = ()


def _dotted(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"], or None for anything that is not a plain attribute chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _fallback_groups(tree: ast.AST) -> dict[int, tuple[tuple[str, str], ...]]:
    """For each `from … import` inside a try/except ImportError, every (module, name) that try offers for the name."""
    groups: dict[int, tuple[tuple[str, str], ...]] = {}
    for node in ast.walk(tree):
        catches_import = isinstance(node, ast.Try) and any(
            getattr(h.type, "id", None) in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        )
        if not catches_import:
            continue
        imports = [
            n for part in (node.body, *[h.body for h in node.handlers]) for n in part if isinstance(n, ast.ImportFrom)
        ]
        offered: dict[str, list[tuple[str, str]]] = {}
        for imp in imports:
            for alias in imp.names:
                offered.setdefault(alias.asname or alias.name, []).append((imp.module, alias.name))
        for imp in imports:
            groups[id(imp)] = tuple(pair for alias in imp.names for pair in offered[alias.asname or alias.name])
    return groups


def distributed_uses(text: str, filename: str) -> list[Use]:
    """Every torch.distributed name a source file imports or reaches as an attribute of an imported module."""
    tree = ast.parse(text, filename)
    fallbacks = _fallback_groups(tree)
    modules: dict[str, str] = {}  # local name -> module it stands for
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch.distributed"):
            for alias in node.names:
                alternatives = tuple(p for p in fallbacks.get(id(node), ()) if p != (node.module, alias.name))
                uses.append(Use(f"{filename}, line {node.lineno}", node.module, alias.name, alternatives))
    for node in ast.walk(tree):
        chain = _dotted(node) if isinstance(node, ast.Attribute) else None
        if not chain or chain[0] not in modules:
            continue
        full = ".".join([modules[chain[0]], *chain[1:]])
        if not full.startswith("torch.distributed."):
            continue
        module = max((m for m in OLDEST if full.startswith(m + ".")), key=len)
        name = full[len(module) + 1 :].split(".")[0]
        uses.append(Use(f"{filename}, line {node.lineno}", module, name))
    return sorted(set(uses), key=lambda u: (u.where, u.name))


def missing_in_oldest(uses: list[Use]) -> list[str]:
    """One message per use that torch 2.4 lacks (no alternative of it exists there either)."""

    def exists(module: str, name: str) -> bool:
        return name in OLDEST.get(module, ())

    return [
        f"{u.where}: {u.module}.{u.name} does not exist in torch {API['torch']}"
        for u in uses
        if not exists(u.module, u.name) and not any(exists(m, n) for m, n in u.alternatives)
    ]


def _lab_uses() -> list[Use]:
    """The torch.distributed names used across the lab's sources."""
    return [u for path in LAB_SOURCES for u in distributed_uses(path.read_text("utf-8"), str(path.relative_to(ROOT)))]


def test_the_lab_uses_only_names_torch_2_4_has():
    uses = _lab_uses()
    assert {u.name for u in uses} >= {"all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce"}
    assert missing_in_oldest(uses) == []


def _counted_by_the_count_test() -> set[str]:
    """Collectives test_count_comm.py issues under the counter (in _known_collectives) and checks the traffic of."""
    tree = ast.parse(COUNT_TEST.read_text("utf-8"))
    (issuer,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_known_collectives"]
    source = "import torch.distributed as dist\n" + ast.unparse(issuer)
    return {u.name for u in distributed_uses(source, COUNT_TEST.name)} - NOT_MEASURED


def test_every_collective_the_lab_calls_is_counted():
    counted = _counted_by_the_count_test()
    assert {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast"} <= counted
    called = {u.name for u in _lab_uses() if u.module == "torch.distributed"}
    assert called - NOT_MEASURED <= counted, (
        f"collectives without a counting test: {sorted(called - NOT_MEASURED - counted)}"
    )


def test_newer_only_names_are_caught_with_their_place():
    source = (
        "import torch.distributed as dist\n"
        "import torch\n"
        "def f(a, b):\n"
        "    dist.all_gather_single(a, b)\n"
        "    torch.distributed.reduce_scatter_single(a, b)\n"
        "    dist.all_gather_into_tensor(a, b)\n"
    )
    assert missing_in_oldest(distributed_uses(source, "zero_stages.py")) == [
        "zero_stages.py, line 4: torch.distributed.all_gather_single does not exist in torch 2.4.0",
        "zero_stages.py, line 5: torch.distributed.reduce_scatter_single does not exist in torch 2.4.0",
    ]


@pytest.mark.parametrize(
    ("fallback", "problems"),
    [
        ("from torch.distributed._composable.fsdp import fully_shard", 0),
        ("from torch.distributed.fsdp import fully_shard", 2),
    ],
)
def test_an_import_passes_only_with_an_alternative_torch_2_4_has(fallback, problems):
    source = f"try:\n    from torch.distributed.fsdp import fully_shard\nexcept ImportError:\n    {fallback}\n"
    assert len(missing_in_oldest(distributed_uses(source, "pytorch_refs.py"))) == problems


def test_the_stated_torch_range_starts_where_the_check_does():
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["optional-dependencies"]["lab"] == [f"torch>={'.'.join(API['torch'].split('.')[:2])}"]
    pins = re.findall(r"^TORCH_PIN\s*:=\s*(\S+)$", (ROOT / "Makefile").read_text("utf-8"), re.M)
    assert pins == ["torch==2.13.0"]  # CI installs the local CPU wheel, nothing else
