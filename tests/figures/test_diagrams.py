"""The drawn-diagram store: each lesson diagram kept by the hash of mermaid's script, its settings and its source."""

from __future__ import annotations

from course.figures.diagrams import diagram_file, diagram_sources, keep, stored

SEQUENCE = "sequenceDiagram\n  A->>B: 梯度\n"
FLOW = "flowchart LR\n  A --> B\n"
TEXT = f"前言\n\n```{{mermaid}}\n{SEQUENCE}```\n\n中间\n\n```mermaid\n{FLOW}```\n\n```{{mermaid}}\n{SEQUENCE}```\n"


def test_each_diagram_is_found_once_in_order_across_texts():
    assert diagram_sources([TEXT, f"```{{mermaid}}\n{FLOW}```\n", "没有图"]) == [SEQUENCE, FLOW]


def test_a_new_mermaid_or_an_edited_diagram_is_another_file(tmp_path):
    one = diagram_file(tmp_path, b"mermaid 11", SEQUENCE)
    assert one == diagram_file(tmp_path, b"mermaid 11", SEQUENCE) and one.parent == tmp_path
    assert one != diagram_file(tmp_path, b"mermaid 12", SEQUENCE)
    assert one != diagram_file(tmp_path, b"mermaid 11", SEQUENCE.replace("梯度", "参数"))


def test_the_store_gives_back_what_was_kept_and_only_that(tmp_path):
    store = tmp_path / "diagrams"
    written = keep(store, b"mermaid 11", {SEQUENCE: "<svg>seq</svg>"})
    assert (
        written == [diagram_file(store, b"mermaid 11", SEQUENCE)] and written[0].read_text("utf-8") == "<svg>seq</svg>"
    )
    assert stored(store, b"mermaid 11", [SEQUENCE, FLOW]) == {SEQUENCE: "<svg>seq</svg>"}
    assert stored(store, b"mermaid 12", [SEQUENCE]) == {}  # drawn by another mermaid: drawn again
