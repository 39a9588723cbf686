"""search_documents: a built page cut into the sections its search results point at."""

from __future__ import annotations

from course.site.search_documents import page_sections

PAGE = """<html><body><nav class="lessons-nav"><a>第 4 课：导航里的字</a></nav><main>
<h1 class="title">第 3 课：重计算</h1><p>开头的一段。</p>
<h2 id="why">为什么重计算</h2><p>以计算<strong>换</strong>显存。</p><script>var hidden = "脚本";</script>
<svg><text>图里的字</text></svg><h3 id="how">怎样做</h3><!-- 注释 --><p>只保存   每层的输入。</p>
<nav class="course-pagination"><a>下一课 →</a></nav></main></body></html>"""


def test_each_heading_starts_a_section_that_links_to_its_anchor():
    sections = page_sections(PAGE, "lesson03.html", "第 3 课：重计算")
    assert [(s.url, s.heading, s.text) for s in sections] == [
        ("lesson03.html", "第 3 课：重计算", "开头的一段。"),
        ("lesson03.html#why", "为什么重计算", "以计算换显存。"),  # no space where the markup was
        ("lesson03.html#how", "怎样做", "只保存 每层的输入。"),
    ]
    assert {s.page for s in sections} == {"第 3 课：重计算"}
    assert len({s.url for s in sections}) == 3  # each its own id in the index


def test_navigation_scripts_drawings_and_comments_are_not_searched():
    text = " ".join(s.text for s in page_sections(PAGE, "lesson03.html", "t"))
    for absent in ("导航里的字", "脚本", "图里的字", "注释", "下一课"):
        assert absent not in text


def test_a_formula_is_searched_as_it_reads_and_a_diagrams_source_not_at_all():
    page = (
        '<main><h2 id="c">通信 \\(2\\Psi\\)</h2><p>每卡 <span class="math inline">\\(\\frac{4\\Psi}{N_d}\\)</span>，'
        '<span class="math inline">\\(1\\times\\)</span> 参数。</p>'
        '<pre class="mermaid">flowchart TB\n  DDP -->|消除冗余| ZeRO1</pre></main>'
    )
    [section] = page_sections(page, "l.html", "t")
    assert (section.heading, section.text) == ("通信 2Ψ", "每卡 4Ψ/N_d，1× 参数。")


def test_quartos_search_text_loses_a_diagrams_source_and_keeps_the_prose_around_it():
    from course.site.search_documents import without_diagram_source

    text = (
        '仅需额外增加 4Ψ/N_d。\n\n\n\nflowchart TB\n    subgraph DDP["传统 DDP: 无分片 (16Ψ)"]\n        W0["参数"]\n'
        "    end\n\n    DDP --&gt;|消除优化器冗余| ZeRO1\n\n图 5-2：ZeRO-1/2/3 显存状态逐级分片消除机制演进拓扑\n"
        "sequenceDiagram\n    A-&gt;&gt;B: AllGather\n下一段。"
    )
    assert (
        without_diagram_source(text)
        == "仅需额外增加 4Ψ/N_d。\n\n\n\n\n图 5-2：ZeRO-1/2/3 显存状态逐级分片消除机制演进拓扑\n下一段。"
    )
