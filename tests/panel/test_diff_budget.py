"""The panel's diffs spend a bounded budget per page: what an agent writes at the limits (a
4,000-character fact of one repeated word, 64 KiB files of repeated lines) renders in well
under a second, with a note where the budget ran out, and ordinary edits keep their exact
word and line diffs. Before, one such pair took minutes of the server's CPU."""

from __future__ import annotations

import time

import pytest

from filememory.models import Revision
from memoryhub.models import Memory
from panel.diffs import BLOCK_LINES, Budget, Line, Segment, line_diff, word_diff
from tests.factories import create_memory
from tests.facts.conftest import run_for, save
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db

MAX_FACT = 4000  # facts.validation.MAX_TEXT
MAX_FILE = 64 * 1024  # the default memory.max_file_bytes
# At the fact limit: "x x x …", and the same with every other word replaced ("x y x y …").
REPEATED = "x " * 1999 + "xx"
ALTERNATING = "x y " * 999 + "x yy"
# At the file limit: one short line repeated, the same rewritten with lines interleaved,
# and a long shared repeated middle (the shape that makes a half-match search quadratic).
LINES = "x\n" * (MAX_FILE // 2)
INTERLEAVED = "x\ny\n" * (MAX_FILE // 4)
MIDDLE_A = "c\n" + "x\ny\n" * (MAX_FILE // 4 - 1) + "d\n"
MIDDLE_B = "e\n" + "y\nx\n" * (MAX_FILE // 4 - 1) + "f\n"
FILE_REVISIONS = [LINES, INTERLEAVED, MIDDLE_A, MIDDLE_B]
WORD_NOTE = "Too large to show word by word"
LINE_NOTE = "Too large to show line by line"


def timed_get(client, url: str):
    started = time.monotonic()
    response = client.get(url)
    return response, time.monotonic() - started


@pytest.fixture
def memory(tenant) -> Memory:
    return create_memory(tenant.owner, {"name": "Scratch", "type": "postgres"})


def put(tenant, memory: Memory, path: str, content: str, etag: str | None = None) -> str:
    """A change by an API key, as an agent writes it; the new ETag."""
    headers = {"HTTP_IF_MATCH": etag} if etag else {}
    response = tenant.api("write").put(
        f"/api/v1/memories/{memory.id}/files/{path}", {"content": content}, **headers
    )
    assert response.status_code in (200, 201), response.content
    return response["ETag"]


def history_url(tenant, memory: Memory, path: str) -> str:
    return f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/history/?path={path}"


def test_the_adversarial_texts_are_at_the_limits():
    assert len(REPEATED) == len(ALTERNATING) == MAX_FACT
    assert all(len(text.encode()) == MAX_FILE for text in FILE_REVISIONS)


@pytest.mark.timeout(20)
def test_a_fact_of_repeated_words_at_the_limit_with_many_versions_renders_fast(
    viewer, tenant, agent
):
    _, run = run_for(tenant, agent, "mallory")
    fact = save(run, "notes/", REPEATED)
    versions = 30  # one budget per page, not per diff: 29 diffs must not take 29 budgets
    for n in range(2, versions + 1):
        save(run, "notes/", ALTERNATING if n % 2 == 0 else REPEATED, replaces=fact["id"])
    url = f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/{fact['id']}/"
    client = logged_in(viewer)
    # The page shows the newest 20 versions, the next page the other 10 (the first whole).
    for page, newest, oldest, shown in ((1, versions, 11, 20), (2, 10, 1, 10)):
        response, took = timed_get(client, f"{url}?page={page}")
        body = response.content.decode()
        assert response.status_code == 200
        assert took < 2, f"page {page} of the fact took {took:.1f} s"
        assert f"Version {newest}<" in body and f"Version {oldest}<" in body
        assert WORD_NOTE in body
        # Every version's change is there (as a rough diff: whole removed and added text).
        assert body.count('<p class="diff">') == shown


@pytest.mark.timeout(20)
def test_a_files_history_of_rewritten_64_kib_files_renders_fast(viewer, tenant, memory, settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "memory.revisions_per_file": 20}
    etag = None
    for n in range(20):  # a whole page of the history (20 revisions, 19 diffs)
        etag = put(tenant, memory, "big.txt", FILE_REVISIONS[n % len(FILE_REVISIONS)], etag)
    response, took = timed_get(logged_in(viewer), history_url(tenant, memory, "big.txt"))
    body = response.content.decode()
    assert response.status_code == 200
    assert took < 2, f"the history page took {took:.1f} s"
    assert body.count('class="version-head"') == 20
    assert body.count('<table class="line-diff">') == 19  # every change is shown, in some form
    assert LINE_NOTE in body


@pytest.mark.timeout(20)
def test_a_revision_and_its_restore_page_of_a_rewritten_64_kib_file_render_fast(
    editor, tenant, memory
):
    put(tenant, memory, "big.txt", INTERLEAVED, put(tenant, memory, "big.txt", LINES))
    first, second = Revision.objects.filter(path="big.txt").order_by("id")
    pages = f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/revisions/"
    client = logged_in(editor)
    for url in (f"{pages}{second.public_id}/", f"{pages}{first.public_id}/restore/"):
        response, took = timed_get(client, url)
        assert response.status_code == 200
        assert took < 2, f"{url} took {took:.1f} s"
        assert LINE_NOTE in response.content.decode()


@pytest.mark.timeout(20)
def test_a_spent_budget_shows_the_first_changed_lines_and_counts_the_rest():
    before, after = "head\n" + LINES + "tail\n", "head\n" + INTERLEAVED + "tail\n"
    assert line_diff(before, after).rough  # its own budget ran out: a rough diff, fast
    whole = line_diff(before, after, budget=Budget(seconds=0))
    assert whole.rough
    last = MAX_FILE // 2 + 2
    assert [(line.kind, line.old, line.new) for line in whole] == [
        ("same", 1, 1),
        ("same", 2, 2),  # head and the first x are unchanged …
        ("removed", 3, None),  # … then one block of every old line up to the tail …
        ("added", None, 3),  # … and one of every new line
        ("same", last, last),
    ]
    removed, added = before.splitlines()[2:-1], after.splitlines()[2:-1]
    assert whole[2].text == "\n".join(removed[:BLOCK_LINES])
    assert whole[2].more == len(removed) - BLOCK_LINES
    assert whole[3].text == "\n".join(added[:BLOCK_LINES])
    assert whole[3].more == len(added) - BLOCK_LINES


def test_a_rewritten_64_kib_file_puts_a_page_of_lines_on_its_revision_page(editor, tenant, memory):
    # A rough block shows its first lines and a count, not the file's 65,000 lines.
    put(tenant, memory, "big.txt", INTERLEAVED, put(tenant, memory, "big.txt", LINES))
    second = Revision.objects.filter(path="big.txt").order_by("id").last()
    url = f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/revisions/{second.public_id}/"
    page = logged_in(editor).get(url).content.decode()
    diff = page[page.index('<table class="line-diff">') :]
    diff = diff[: diff.index("</table>")]
    assert diff.count("\n") < 4 * BLOCK_LINES
    assert "more removed lines" in diff and "more added lines" in diff


def test_an_ordinary_edit_keeps_its_exact_word_diff():
    before, after = "Ayşe İstanbul'da yaşıyor ve çay sever", "Ayşe İzmir'de yaşıyor ve kahve sever"
    diff = word_diff(before, after)
    assert not diff.rough
    assert diff == [
        Segment("same", "Ayşe "),
        Segment("removed", "İstanbul'da"),
        Segment("added", "İzmir'de"),
        Segment("same", " yaşıyor ve "),
        Segment("removed", "çay"),
        Segment("added", "kahve"),
        Segment("same", " sever"),
    ]
    # A long fact too (past what difflib is given): still the word that changed, exactly.
    words = [f"word{n}" for n in range(400)]
    changed = words[:200] + ["other"] + words[201:]
    long = word_diff(" ".join(words), " ".join(changed))
    assert not long.rough
    assert long == [
        Segment("same", " ".join(words[:200]) + " "),
        Segment("removed", "word200"),
        Segment("added", "other"),
        Segment("same", " " + " ".join(words[201:])),
    ]


def test_a_one_word_edit_stays_exact_when_the_pages_budget_is_spent():
    spent = Budget(seconds=0)
    diff = word_diff(REPEATED, REPEATED[:-2] + "zz", budget=spent)
    assert not diff.rough
    assert diff == [
        Segment("same", REPEATED[:-2]),
        Segment("removed", "xx"),
        Segment("added", "zz"),
    ]
    rough = word_diff(REPEATED, ALTERNATING, budget=spent)
    assert rough.rough
    assert rough == [
        Segment("same", "x "),
        Segment("removed", REPEATED[2:]),
        Segment("added", ALTERNATING[2:]),
    ]


def test_an_ordinary_line_edit_keeps_its_exact_line_diff():
    before = "".join(f"line {n}\n" for n in range(1, 2001))
    after = before.replace("line 1000\n", "line one thousand\nline 1000 and a half\n")
    diff = line_diff(before, after, context=1)
    assert not diff.rough
    assert diff == [
        Line("gap", None, None, ""),
        Line("same", 999, 999, "line 999"),
        Line("removed", 1000, None, "line 1000"),
        Line("added", None, 1000, "line one thousand"),
        Line("added", None, 1001, "line 1000 and a half"),
        Line("same", 1001, 1002, "line 1001"),
        Line("gap", None, None, ""),
    ]
