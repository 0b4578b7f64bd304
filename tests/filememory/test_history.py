"""Revisions: who changed what, restoring, purging, and the history limits."""

from __future__ import annotations

from filememory.models import File, Revision
from memoryhub.models import AuditEvent
from tests.conftest import error_of
from tests.filememory.conftest import assert_accounting, files_url, limits, revisions_url


def put(api, memory, path, content, etag=None):
    extra = {"HTTP_IF_MATCH": etag} if etag is not None else {}
    return api.put(files_url(memory, path), {"content": content}, **extra)


def write_versions(api, memory, path, contents):
    etag = None
    for content in contents:
        r = put(api, memory, path, content, etag)
        assert r.status_code in (200, 201), r.content
        etag = r["ETag"]
    return etag


def test_revisions_of_a_path_newest_first(runner, reader, tenant, memory):
    write_versions(runner, memory, "a.md", ["one", "two", "three"])
    write_versions(runner, memory, "b.md", ["bee"])
    r = reader.get(revisions_url(memory), {"path": "a.md"})
    assert r.status_code == 200
    results = r.json()["results"]
    assert [rev["version"] for rev in results] == [3, 2, 1]
    assert [rev["action"] for rev in results] == ["update", "update", "create"]
    first = results[0]
    assert first["id"].startswith("rev_") and first["path"] == "a.md"
    assert first["size"] == 5 and "content" not in first
    assert first["principal_id"] == tenant.workspace.api_keys.get(permission="run").id
    assert first["run_id"] is None and first["tool_call_id"] is None
    assert first["created_at"]
    everything = reader.get(revisions_url(memory)).json()
    assert everything["count"] == 4
    assert everything["results"][0]["path"] == "b.md"


def test_one_revision_with_content(reader, runner, memory):
    write_versions(runner, memory, "a.md", ["one", "two"])
    listed = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"]
    r = reader.get(revisions_url(memory, f"/{listed[1]['id']}"))
    assert r.status_code == 200
    assert r.json()["content"] == "one" and r.json()["version"] == 1
    assert reader.get(revisions_url(memory, "/rev_nosuch")).status_code == 404


def test_delete_leaves_a_revision_without_content(runner, reader, memory):
    etag = write_versions(runner, memory, "a.md", ["one"])
    runner.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=etag)
    newest = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][0]
    assert newest["action"] == "delete" and newest["size"] == 0
    full = reader.get(revisions_url(memory, f"/{newest['id']}")).json()
    assert full["content"] is None
    r = runner.post(revisions_url(memory, f"/{newest['id']}/restore"))
    assert r.status_code == 422


def test_restore_an_old_revision(runner, reader, memory):
    etag = write_versions(runner, memory, "a.md", ["one", "two"])
    old = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][1]
    r = runner.post(revisions_url(memory, f"/{old['id']}/restore"), HTTP_IF_MATCH=etag)
    assert r.status_code == 200, r.content
    assert r.json()["content"] == "one" and r.json()["version"] == 3
    assert r["ETag"] == r.json()["etag"]
    newest = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][0]
    assert newest["action"] == "restore" and newest["restored_from"] == old["id"]
    # The ETag it was given is stale now.
    r = runner.post(revisions_url(memory, f"/{old['id']}/restore"), HTTP_IF_MATCH=etag)
    assert r.status_code == 412 and error_of(r)["current"]["version"] == 3
    # Without If-Match it replaces whatever is current.
    r = runner.post(revisions_url(memory, f"/{old['id']}/restore"))
    assert r.status_code == 200 and r.json()["version"] == 4
    assert AuditEvent.objects.filter(action="file.restore").count() == 2
    assert_accounting(memory)


def test_restore_recreates_a_deleted_file(runner, reader, memory):
    etag = write_versions(runner, memory, "a.md", ["one"])
    runner.delete(files_url(memory, "a.md"), HTTP_IF_MATCH=etag)
    created = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][1]
    r = runner.post(revisions_url(memory, f"/{created['id']}/restore"))
    assert r.status_code == 200
    assert File.objects.get(memory=memory, path="a.md").content == "one"
    assert_accounting(memory)


def test_restore_permissions_and_bodies(runner, reader, stranger, memory):
    write_versions(runner, memory, "a.md", ["one"])
    rev = reader.get(revisions_url(memory)).json()["results"][0]
    url = revisions_url(memory, f"/{rev['id']}/restore")
    assert reader.post(url).status_code == 403
    assert stranger.post(url).status_code == 404
    assert runner.post(url, {"x": 1}).status_code == 422


def test_purge_a_path_and_the_memory(owner, runner, reader, memory):
    write_versions(runner, memory, "a.md", ["one", "two"])
    write_versions(runner, memory, "b.md", ["bee"])
    assert runner.delete(revisions_url(memory), {"path": "a.md"}).status_code == 403
    assert reader.delete(revisions_url(memory)).status_code == 403
    r = owner.delete(revisions_url(memory) + "?path=a.md")
    assert r.status_code == 200 and r.json() == {"deleted": 2}
    assert not Revision.objects.filter(path="a.md").exists()
    assert Revision.objects.filter(path="b.md").count() == 1
    assert_accounting(memory)
    r = owner.delete(revisions_url(memory))
    assert r.json() == {"deleted": 1}
    memory = assert_accounting(memory)
    assert memory.history_bytes == 0 and memory.content_bytes == 6
    # The files themselves stay.
    assert File.objects.filter(memory=memory).count() == 2
    assert AuditEvent.objects.filter(action="history.purge").count() == 2
    assert owner.delete(revisions_url(memory) + "?path=../x").status_code == 422


def test_revisions_per_file(runner, memory):
    with limits(revisions_per_file=3):
        write_versions(runner, memory, "a.md", [f"v{i}" for i in range(6)])
        write_versions(runner, memory, "b.md", ["b"])
    versions = (
        Revision.objects.filter(path="a.md").order_by("-id").values_list("version", flat=True)
    )
    assert list(versions) == [6, 5, 4]
    assert Revision.objects.filter(path="b.md").count() == 1
    assert_accounting(memory)


def test_total_bytes_prunes_oldest_history_first(runner, memory):
    with limits(max_total_bytes=100):
        write_versions(runner, memory, "a.md", ["a" * 20, "b" * 20])  # content 20, history 40
        write_versions(runner, memory, "b.md", ["c" * 30])  # content 50, history 70 -> prune
        memory = assert_accounting(memory)
        assert memory.content_bytes + memory.history_bytes <= 100
        kept = Revision.objects.filter(memory=memory).order_by("id")
        # The oldest revision (a.md's first version) went first.
        assert [(r.path, r.version) for r in kept] == [("a.md", 2), ("b.md", 1)]


def test_memory_full_only_when_content_alone_is_over(runner, reader, memory):
    with limits(max_total_bytes=100):
        write_versions(runner, memory, "a.md", ["a" * 60])
        r = put(runner, memory, "b.md", "b" * 41)
        assert r.status_code == 409
        error = error_of(r)
        assert error["code"] == "conflict" and error["reason"] == "memory_full"
        assert not File.objects.filter(path="b.md").exists()
        assert put(runner, memory, "b.md", "b" * 40).status_code == 201
        memory = assert_accounting(memory)
        assert memory.content_bytes == 100 and memory.history_bytes == 0
    # Lowering the limit below the content still lets a change shrink it.
    with limits(max_total_bytes=50):
        etag = reader.get(files_url(memory, "a.md"))["ETag"]
        assert put(runner, memory, "a.md", "a" * 61, etag).status_code == 409
        assert put(runner, memory, "a.md", "a" * 10, etag).status_code == 200
        assert_accounting(memory)


def test_restore_respects_memory_full(runner, reader, memory):
    etag = write_versions(runner, memory, "a.md", ["a" * 50, "x"])
    old = reader.get(revisions_url(memory), {"path": "a.md"}).json()["results"][1]
    with limits(max_total_bytes=40):
        r = runner.post(revisions_url(memory, f"/{old['id']}/restore"), HTTP_IF_MATCH=etag)
    assert r.status_code == 409 and error_of(r)["reason"] == "memory_full"
    assert File.objects.get(memory=memory, path="a.md").content == "x"
    assert_accounting(memory)


def test_revision_lookups_stay_inside_their_memory(tenant, owner, runner, reader, stranger, memory):
    from tests.factories import create_memory

    write_versions(runner, memory, "a.md", ["one"])
    other = create_memory(tenant.owner, {"name": "Other"})
    rev = reader.get(revisions_url(memory)).json()["results"][0]["id"]
    assert reader.get(revisions_url(other, f"/{rev}")).status_code == 404
    assert runner.post(revisions_url(other, f"/{rev}/restore")).status_code == 404
    assert stranger.get(revisions_url(memory)).status_code == 404
    assert stranger.get(revisions_url(memory, f"/{rev}")).status_code == 404
    assert stranger.delete(revisions_url(memory)).status_code == 404
    assert reader.get(revisions_url(memory), {"path": "a/../b"}).status_code == 422
    assert Revision.objects.filter(memory=memory).count() == 1


def test_rename_by_tool_is_audited_with_both_paths(memory, converse):
    c = converse()
    c.tool("memory_file_create", path="a.md", file_text="x")
    c.tool("memory_file_rename", old_path="a.md", new_path="b.md")
    event = AuditEvent.objects.get(action="file.rename")
    assert event.object_id == f"{memory.id}:b.md"
    assert event.details["run_id"] == c.run.id and event.details["renamed_from"] == "a.md"
