"""The README and the guides in docs/ show only commands, flags, targets, modules and links that exist, and the
README starts a newcomer with exactly `make` and `make test`."""

from __future__ import annotations

import re

import pytest

from tests.doc_references import ROOT, Project, check_document, documents, links_in

PROJECT = Project()


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_flag_and_link_a_document_shows_exists(path):
    """Each `course`/`make`/`nbgrader`/`python -m` command, each flag and each relative link is real."""
    problems = check_document(path, project=PROJECT)
    assert not problems, "\n".join(map(str, problems))


def test_the_readme_starts_with_the_two_commands():
    """Before any section, the README's one code block is `make` then `make test`."""
    text = (ROOT / "README.md").read_text("utf-8")
    intro = text.split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", intro, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, "the introduction holds exactly one code block"
    assert [line.split("#", 1)[0].strip() for line in blocks[0][1].splitlines()] == ["make", "make test"]


def test_every_guide_is_linked_from_the_readme():
    """A guide nobody links to is a guide nobody reads: the README links every docs/*.md."""
    readme = (ROOT / "README.md").read_text("utf-8")
    linked = {(ROOT / target.partition("#")[0]).resolve() for _, target in links_in(readme)}
    guides = documents()[1:]
    assert guides, "no guides in docs/"
    unlinked = [p.name for p in guides if p.resolve() not in linked]
    assert not unlinked, f"docs/ guides the README does not link: {unlinked}"


PLANTED = """# A guide

Grade with `course grade lesson05 --jobs 2`, or not at all with `course grade lesson05 --no-such-flag`.

```bash
course grade lesson05 --force ada   # fine
course frobnicate lesson05
make demo && make deploy
```

Stock: `nbgrader autograde lesson05 --force`; a typo: `nbgrader autograd lesson05`, and
`nbgrader db assignment remove lesson05 --forse`.
Run `python -m course.lab.decoder_memory --check` but not `python -m course.no_such_module`.
It prints `course build: up to date`. See [the lab](docs/present.md#the-lab) and [gone](docs/absent.md),
[a missing section](docs/present.md#no-such-section), [the site](https://example.org/x.md).
"""


def test_the_checker_reports_what_does_not_exist_with_file_and_line(tmp_path):
    """Planted made-up flags, subcommands, targets, modules and links are each reported, located; the real ones
    beside them are not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "present.md").write_text("# Present\n\n## The lab\n", "utf-8")
    (tmp_path / "Makefile").write_text((ROOT / "Makefile").read_text("utf-8"), "utf-8")
    guide = tmp_path / "guide.md"
    problems = check_document(guide, PLANTED, Project(tmp_path))
    found = [(p.line, p.message) for p in problems]
    assert all(p.path == guide for p in problems)
    expected = [
        (3, "`course grade` has no option '--no-such-flag'"),
        (7, "`course frobnicate`: course has no subcommand 'frobnicate'"),
        (8, "`make deploy`: the Makefile has no target 'deploy'"),
        (11, "`nbgrader` has no subcommand 'autograd'"),
        (12, "`nbgrader db assignment remove` has no option '--forse'"),
        (13, "`python -m course.no_such_module`: no module named 'course.no_such_module'"),
        (14, "link to 'docs/absent.md': no file 'docs/absent.md' next to guide.md"),
        (15, "link to 'docs/present.md#no-such-section': present.md has no heading #no-such-section"),
    ]
    for line, start in expected:
        assert any(at == line and message.startswith(start) for at, message in found), (line, start, found)
    assert len(problems) == len(expected), "\n".join(map(str, problems))
    assert str(problems[0]).startswith(f"{guide}:3: ")


def test_a_command_with_unbalanced_quotes_is_reported(tmp_path):
    """A shell line nobody could paste is a problem too, not silently skipped."""
    problems = check_document(tmp_path / "g.md", '# G\n\n```bash\ncourse report lesson05 --note "open\n```\n')
    assert [(p.line, "unbalanced" in p.message) for p in problems] == [(4, True)]
