"""File ETags name a file without revealing how many files other workspaces created."""

from __future__ import annotations

import re

from filememory.models import File
from tests.factories import create_memory
from tests.filememory.conftest import files_url


def put(api, memory, path, content, etag=None):
    extra = {"HTTP_IF_MATCH": etag} if etag is not None else {}
    return api.put(files_url(memory, path), {"content": content}, **extra)


def token(etag: str) -> str:
    return etag.strip('"').partition("-")[0]


def test_etags_say_nothing_about_other_workspaces_files(tenant, other_tenant, runner, memory):
    theirs = create_memory(other_tenant.owner, {"name": "Theirs", "type": "postgres"})
    first = put(runner, memory, "a.md", "one")["ETag"]
    for i in range(3):  # another tenant creates files in between
        assert put(other_tenant.api("run"), theirs, f"t{i}.md", "x").status_code == 201
    second = put(runner, memory, "b.md", "two")["ETag"]
    ids = list(File.objects.filter(memory=memory).order_by("path").values_list("id", flat=True))
    assert ids[1] - ids[0] == 4  # the row ids are one sequence across workspaces...
    for etag, row_id in zip((first, second), ids, strict=True):
        # ...and the ETag names the file by an opaque token, not by that sequence.
        assert re.fullmatch(r'"[0-9a-f]{16}-1"', etag), etag
        assert str(row_id) not in token(etag)


def test_a_row_id_in_an_etag_never_matches(runner, memory):
    """Tags of the old ``"<row id>-<version>"`` shape would let a tenant probe its ids."""
    created = put(runner, memory, "a.md", "one")
    row = File.objects.get(memory=memory, path="a.md")
    r = put(runner, memory, "a.md", "two", f'"{row.id}-1"')
    assert r.status_code == 412
    assert File.objects.get(pk=row.pk).content == "one"
    assert put(runner, memory, "a.md", "two", created["ETag"]).status_code == 200


def test_a_file_created_again_never_matches_its_old_etag(runner, memory):
    old = put(runner, memory, "a.md", "one")["ETag"]
    assert runner.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=old).status_code == 204
    new = put(runner, memory, "a.md", "again")["ETag"]
    assert token(new) != token(old)
    assert put(runner, memory, "a.md", "stale", old).status_code == 412
