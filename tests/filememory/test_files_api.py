"""/api/v1/memories/{id}/files: reading and writing files with ETags."""

from __future__ import annotations

import pytest

from filememory.models import File, Revision
from memoryhub.models import AuditEvent, Memory
from tests.conftest import error_of
from tests.filememory.conftest import assert_accounting, files_url, limits


def put(api, memory, path, content, etag=None):
    extra = {"HTTP_IF_MATCH": etag} if etag is not None else {}
    return api.put(files_url(memory, path), {"content": content}, **extra)


def test_create_read_update_delete(runner, reader, memory):
    r = put(runner, memory, "prefs/language.md", "Reply in English.\n")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["path"] == "prefs/language.md" and body["version"] == 1
    assert body["content"] == "Reply in English.\n" and body["size"] == 18
    assert r["ETag"] == body["etag"]
    r = reader.get(files_url(memory, "prefs/language.md"))
    assert r.status_code == 200
    assert r.json()["content"] == "Reply in English.\n"
    assert r["ETag"] == body["etag"]
    r = put(runner, memory, "prefs/language.md", "Reply in Turkish.\n", body["etag"])
    assert r.status_code == 200, r.content
    updated = r.json()
    assert updated["version"] == 2 and updated["etag"] != body["etag"]
    r = runner.delete(files_url(memory, "prefs/language.md"), HTTP_IF_MATCH=updated["etag"])
    assert r.status_code == 204
    assert reader.get(files_url(memory, "prefs/language.md")).status_code == 404
    assert_accounting(memory)


def test_tree_lists_files_without_content(runner, reader, memory):
    for path in ("b.md", "notes/a.md", "notes/deep/c.md", "a.md"):
        assert put(runner, memory, path, path).status_code == 201
    r = reader.get(files_url(memory))
    assert r.status_code == 200
    results = r.json()["results"]
    assert [f["path"] for f in results] == ["a.md", "b.md", "notes/a.md", "notes/deep/c.md"]
    assert "content" not in results[0] and results[0]["size"] == 4
    r = reader.get(files_url(memory), {"prefix": "notes"})
    assert [f["path"] for f in r.json()["results"]] == ["notes/a.md", "notes/deep/c.md"]
    assert reader.get(files_url(memory), {"prefix": "../x"}).status_code == 422


def test_put_without_if_match_only_creates(runner, memory):
    first = put(runner, memory, "a.md", "one").json()
    r = put(runner, memory, "a.md", "two")
    assert r.status_code == 412
    error = error_of(r)
    assert error["code"] == "precondition_failed"
    assert error["current"]["content"] == "one" and error["current"]["etag"] == first["etag"]
    assert File.objects.get(memory=memory, path="a.md").content == "one"


def test_stale_if_match_gets_current_file(runner, memory):
    first = put(runner, memory, "a.md", "one").json()
    second = put(runner, memory, "a.md", "two", first["etag"]).json()
    r = put(runner, memory, "a.md", "three", first["etag"])
    assert r.status_code == 412
    error = error_of(r)
    assert error["current"]["content"] == "two"
    assert error["current"]["version"] == 2 and error["etag"] == second["etag"]
    assert runner.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=first["etag"]).status_code == 412
    assert File.objects.get(memory=memory, path="a.md").content == "two"
    assert Revision.objects.filter(memory=memory).count() == 2


@pytest.mark.parametrize("etag", ['"garbage"', "nope", '"1"', '"x-1"', "", 'W/"99999-1"'])
def test_malformed_or_foreign_etags_are_412(runner, memory, etag):
    put(runner, memory, "a.md", "one")
    r = put(runner, memory, "a.md", "two", etag)
    assert r.status_code == 412
    assert error_of(r)["current"]["content"] == "one"


def test_star_and_lists_match_and_weak_tags_never_do(runner, memory):
    first = put(runner, memory, "a.md", "one").json()
    r = put(runner, memory, "a.md", "two", "*")
    assert r.status_code == 200 and r.json()["version"] == 2
    etag = r.json()["etag"]
    assert put(runner, memory, "a.md", "weak", f"W/{etag}").status_code == 412
    r = put(runner, memory, "a.md", "three", f'"1-1", {etag}')
    assert r.status_code == 200 and r.json()["version"] == 3
    assert first["version"] == 1
    # If-Match on a file that does not exist: precondition fails, nothing to show.
    r = put(runner, memory, "missing.md", "x", "*")
    assert r.status_code == 412 and error_of(r)["current"] is None
    assert not File.objects.filter(path="missing.md").exists()


def test_recreated_file_does_not_match_old_etag(runner, memory):
    old = put(runner, memory, "a.md", "one").json()
    runner.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=old["etag"])
    new = put(runner, memory, "a.md", "again").json()
    assert new["version"] == 1 and new["etag"] != old["etag"]
    assert put(runner, memory, "a.md", "x", old["etag"]).status_code == 412


def test_delete_needs_if_match_and_existing_file(runner, memory):
    put(runner, memory, "a.md", "one")
    assert runner.delete(files_url(memory, "a.md")).status_code == 428
    r = runner.delete(files_url(memory, "nope.md"), HTTP_IF_MATCH='"1-1"')
    assert r.status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "../secret.md",
        "a/../b.md",
        "./a.md",
        "a/./b.md",
        "..",
        "a//b.md",
        "a/",
        "/etc/passwd",
        "a\\b.md",
        "a%01b.md",
        "a%7Fb.md",
        "a%0Ab.md",
        "x" * 256,
        "/".join(["abcdefghij"] * 100),
    ],
)
def test_path_safety(runner, reader, memory, path):
    r = put(runner, memory, path, "x")
    assert r.status_code in (404, 422), r.content
    if r.status_code == 404:  # only a path the URL router cannot even match
        pytest.fail(f"{path!r} did not reach the path check")
    assert error_of(r)["code"] == "invalid_argument"
    assert reader.get(files_url(memory, path)).status_code == 422
    assert not File.objects.exists()


def test_nul_in_a_url_is_refused_before_routing(runner, memory):
    # The shared middleware answers 400 for any NUL in a URL; tools and bodies get 422.
    r = put(runner, memory, "a%00b.md", "x")
    assert r.status_code == 400
    assert not File.objects.exists()


def test_unicode_paths_are_fine(runner, reader, memory):
    r = put(runner, memory, "notlar/%C3%A7ay.md", "çay")
    assert r.status_code == 201, r.content
    assert r.json()["path"] == "notlar/çay.md" and r.json()["size"] == 4
    assert reader.get(files_url(memory, "notlar/%C3%A7ay.md")).status_code == 200


def test_file_size_limit_is_utf8_bytes(runner, memory):
    with limits(max_file_bytes=10):
        assert put(runner, memory, "a.md", "x" * 10).status_code == 201
        r = put(runner, memory, "b.md", "é" * 6)
        assert r.status_code == 422
        error = error_of(r)
        assert error["reason"] == "file_too_large" and "10 bytes" in error["message"]
    assert not File.objects.filter(path="b.md").exists()


def test_a_full_size_file_fits_even_when_escaped(runner, memory):
    from django.conf import settings

    limit = settings.MEMORYHUB_SETTINGS["memory.max_file_bytes"]
    content = '"' * limit  # every byte JSON-escaped: a body twice the file's size
    r = put(runner, memory, "quotes.md", content)
    assert r.status_code == 201, r.content[:200]
    assert r.json()["size"] == limit
    r = put(runner, memory, "big.md", "x" * (limit + 1))
    assert r.status_code == 422


def test_oversized_body_is_413(runner, memory):
    with limits(max_file_bytes=100):
        r = put(runner, memory, "a.md", "x" * 10_000)
    assert r.status_code == 413


@pytest.mark.parametrize(
    "payload", [{"content": 5}, {"content": None}, {}, {"content": "x", "extra": 1}, []]
)
def test_put_refuses_bad_bodies(runner, memory, payload):
    r = runner.put(files_url(memory, "a.md"), payload)
    assert r.status_code == 422
    assert not File.objects.exists()


def test_put_malformed_json_is_400(runner, memory):
    r = runner.generic("PUT", files_url(memory, "a.md"), "{nope")
    assert r.status_code == 400


def test_permissions(owner, runner, reader, anonymous, memory):
    assert put(reader, memory, "a.md", "x").status_code == 403
    assert put(anonymous, memory, "a.md", "x").status_code == 401
    assert put(runner, memory, "a.md", "x").status_code == 201
    assert put(owner, memory, "b.md", "x").status_code == 201
    etag = reader.get(files_url(memory, "a.md"))["ETag"]
    assert reader.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=etag).status_code == 403
    assert reader.get(files_url(memory)).status_code == 200
    assert anonymous.get(files_url(memory)).status_code == 401


def test_other_workspace_and_other_kinds_are_404(runner, stranger, tenant, memory):
    put(runner, memory, "a.md", "x")
    assert stranger.get(files_url(memory, "a.md")).status_code == 404
    assert stranger.get(files_url(memory)).status_code == 404
    assert put(stranger, memory, "b.md", "x").status_code == 404
    record = Memory.objects.create(workspace=tenant.workspace, kind="record", type="mem0_oss")
    assert runner.get(files_url(record)).status_code == 404
    assert put(runner, record, "a.md", "x").status_code == 404
    assert runner.get("/api/v1/memories/mem_nosuch/files/a.md").status_code == 404


def test_audit_has_paths_never_content(runner, memory):
    first = put(runner, memory, "a.md", "secret words").json()
    put(runner, memory, "a.md", "more secret words", first["etag"])
    events = AuditEvent.objects.filter(object_type="file").order_by("id")
    assert [e.action for e in events] == ["file.create", "file.update"]
    assert events[0].object_id == f"{memory.id}:a.md"
    assert all("secret" not in str(e.details) for e in events)


def test_stats_in_the_catalog(owner, runner, memory):
    put(runner, memory, "a.md", "12345")
    put(runner, memory, "b.md", "123")
    body = owner.get(f"/api/v1/memories/{memory.id}").json()
    assert body["file_count"] == 2 and body["content_bytes"] == 8
    assert body["history_bytes"] == 8
    listed = owner.get("/api/v1/memories").json()["results"][0]
    assert listed["file_count"] == 2


def test_deleting_the_memory_removes_files_and_history(owner, runner, memory):
    put(runner, memory, "a.md", "x")
    etag = owner.get(f"/api/v1/memories/{memory.id}")["ETag"]
    assert owner.delete(f"/api/v1/memories/{memory.id}", HTTP_IF_MATCH=etag).status_code == 204
    assert not File.objects.exists() and not Revision.objects.exists()
    assert runner.get(files_url(memory, "a.md")).status_code == 404
    assert put(runner, memory, "b.md", "x").status_code == 404


def test_a_path_of_the_full_1024_bytes_is_written_audited_and_purged(runner, owner, memory):
    path = "/".join(["p" * 200] * 5) + "/" + "q" * 19  # 1024 bytes
    assert len(path.encode()) == 1024
    assert put(runner, memory, path, "x").status_code == 201
    assert runner.get(f"/api/v1/memories/{memory.id}/files/{path}").json()["content"] == "x"
    purged = owner.delete(f"/api/v1/memories/{memory.id}/revisions?path={path}")
    assert purged.status_code == 200, purged.content
