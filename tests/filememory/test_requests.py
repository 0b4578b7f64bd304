"""Checks that moved from the services to the views' rules, each still made once."""

from __future__ import annotations

from filememory.models import File
from tests.conftest import error_of
from tests.filememory.conftest import files_url, limits, revisions_url


def test_restoring_content_over_a_lowered_file_limit_is_refused(runner, reader, memory):
    # The revision's content was checked when it was written; the limit is checked again
    # at the restore (the store itself no longer checks what reached it checked).
    first = runner.put(files_url(memory, "a.md"), {"content": "x" * 20})
    runner.put(files_url(memory, "a.md"), {"content": "y"}, HTTP_IF_MATCH=first["ETag"])
    old = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][1]
    with limits(max_file_bytes=10):
        r = runner.post(revisions_url(memory, f"/{old['id']}/restore"))
    assert r.status_code == 422 and error_of(r)["reason"] == "file_too_large"
    assert File.objects.get(memory=memory, path="a.md").content == "y"


def test_empty_query_values(runner, reader, owner, memory):
    # ?prefix= is the root (every file); ?path= is an empty path (422), listing or purging.
    runner.put(files_url(memory, "notes/a.md"), {"content": "x"})
    listed = reader.get(files_url(memory), {"prefix": ""})
    assert [f["path"] for f in listed.json()["results"]] == ["notes/a.md"]
    for answer in (
        reader.get(revisions_url(memory), {"path": ""}),
        owner.delete(revisions_url(memory) + "?path="),
    ):
        assert answer.status_code == 422
        assert error_of(answer)["message"] == "path must not be empty"
