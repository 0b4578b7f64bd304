"""/api/v1/memories: the catalog of memories of every kind."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from memoryhub.models import AuditEvent, Memory
from tests.conftest import error_of

URL = "/api/v1/memories"


def create(api, **data):
    data.setdefault("name", "Team conventions")
    return api.post(URL, data)


def test_create_file_memory_defaults(owner):
    r = create(owner)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["id"].startswith("mem_")
    assert body["kind"] == "file" and body["type"] == "postgres"
    assert body["guide"] is None and body["inherited_guide"]
    assert body["always_load"] == [] and body["labels"] == []
    assert (body["file_count"], body["content_bytes"], body["history_bytes"]) == (0, 0, 0)
    assert body["provider_id"] is None and body["namespace"] is None
    assert r["ETag"] == body["etag"] == '"1"'
    assert set(body) == {
        "id", "name", "description", "labels", "kind", "type", "guide", "inherited_guide",
        "always_load", "provider_id", "namespace", "file_count", "content_bytes",
        "history_bytes", "etag", "created_at", "updated_at",
    }  # fmt: skip


def test_create_with_everything(owner):
    r = create(
        owner,
        type="postgres",
        description="How we work",
        labels=["team", "team", "eng"],
        guide="Keep one file per topic.",
        always_load=["README.md", "prefs/language.md"],
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["labels"] == ["team", "eng"]
    assert body["guide"] == "Keep one file per topic."
    assert body["always_load"] == ["README.md", "prefs/language.md"]
    event = AuditEvent.objects.get(action="memory.create", object_id=body["id"])
    assert event.details == {"kind": "file"}


def test_empty_guide_means_no_guide(owner):
    body = create(owner, guide="").json()
    assert body["guide"] == "" and body["inherited_guide"]


def test_inherited_guide_comes_from_the_deployment(owner):
    custom = {**settings.MEMORYHUB_SETTINGS, "memory.default_guide.file": "Deployment guide"}
    with override_settings(MEMORYHUB_SETTINGS=custom):
        body = create(owner).json()
    assert body["inherited_guide"] == "Deployment guide"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"name": ""}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"type": "nosuch"}, "type"),
        ({"type": 3}, "type"),
        ({"labels": "team"}, "labels"),
        ({"labels": [1]}, "labels[0]"),
        ({"labels": ["x" * 65]}, "labels[0]"),
        ({"labels": [str(i) for i in range(33)]}, "labels"),
        ({"description": 1}, "description"),
        ({"guide": 1}, "guide"),
        ({"always_load": "README.md"}, "always_load"),
        ({"always_load": [f"f{i}.md" for i in range(65)]}, "always_load"),
        ({"always_load": ["../etc/passwd"]}, "always_load[0]"),
        ({"always_load": ["/abs.md"]}, "always_load[0]"),
        ({"always_load": ["a.md", "a.md"]}, "always_load"),
        ({"provider_id": "memprov_x"}, "provider_id"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_create_refuses_bad_input(owner, data, message):
    data = {"name": "ok", **data}
    r = owner.post(URL, data)
    assert r.status_code == 422, r.content
    assert message in error_of(r)["message"]
    assert not Memory.objects.exists()


def test_create_refuses_lone_surrogates(owner):
    r = owner.generic("POST", URL, '{"name": "ok", "description": "\\ud800"}')
    assert r.status_code == 422, r.content
    assert "description" in error_of(r)["message"]


def test_create_missing_name(owner):
    r = owner.post(URL, {"type": "postgres"})
    assert r.status_code == 422
    assert "name" in error_of(r)["message"]


def test_guide_limit_is_in_utf8_bytes(owner):
    limit = settings.MEMORYHUB_SETTINGS["memory.guide_bytes"]
    assert create(owner, guide="x" * limit).status_code == 201
    r = create(owner, guide="é" * (limit // 2 + 1))
    assert r.status_code == 422
    assert "guide" in error_of(r)["message"]


def test_permissions(owner, runner, reader, anonymous):
    assert create(runner).status_code == 403
    assert create(reader).status_code == 403
    assert create(anonymous).status_code == 401
    memory = create(owner).json()
    assert reader.get(f"{URL}/{memory['id']}").status_code == 200
    assert reader.get(URL).status_code == 200
    r = runner.patch(f"{URL}/{memory['id']}", {"name": "x"}, HTTP_IF_MATCH='"1"')
    assert r.status_code == 403
    assert runner.delete(f"{URL}/{memory['id']}", HTTP_IF_MATCH='"1"').status_code == 403
    assert anonymous.get(URL).status_code == 401


def test_other_workspace_sees_404(owner, stranger):
    memory = create(owner).json()
    for r in (
        stranger.get(f"{URL}/{memory['id']}"),
        stranger.patch(f"{URL}/{memory['id']}", {"name": "x"}, HTTP_IF_MATCH='"1"'),
        stranger.delete(f"{URL}/{memory['id']}", HTTP_IF_MATCH='"1"'),
    ):
        assert r.status_code == 404
    assert stranger.get(URL).json()["count"] == 0
    assert owner.get(f"{URL}/mem_doesnotexist").status_code == 404
    assert owner.get(f"{URL}/not-an-id").status_code == 404


def test_patch_with_if_match(owner):
    memory = create(owner).json()
    url = f"{URL}/{memory['id']}"
    r = owner.patch(url, {"name": "Renamed", "guide": None, "always_load": ["a.md"]})
    assert r.status_code == 428
    r = owner.patch(url, {"name": "Renamed"}, HTTP_IF_MATCH='"7"')
    assert r.status_code == 412
    r = owner.patch(
        url,
        {"name": "Renamed", "labels": ["x"], "description": "d", "always_load": ["a.md"]},
        HTTP_IF_MATCH=memory["etag"],
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["name"] == "Renamed" and body["labels"] == ["x"] and body["description"] == "d"
    assert body["always_load"] == ["a.md"]
    assert r["ETag"] == '"2"'
    # The old ETag is stale now.
    r = owner.patch(url, {"name": "Again"}, HTTP_IF_MATCH=memory["etag"])
    assert r.status_code == 412
    assert owner.get(url).json()["name"] == "Renamed"
    event = AuditEvent.objects.get(action="memory.update", object_id=memory["id"])
    assert event.details == {"fields": ["always_load", "description", "labels", "name"]}


@pytest.mark.parametrize(
    "data",
    [{"type": "postgres"}, {"namespace": "x"}, {"provider_id": "memprov_x"}, {"name": ""},
     {"always_load": ["a//b"]}, {"nope": 1}],
)  # fmt: skip
def test_patch_refuses_bad_fields(owner, data):
    memory = create(owner).json()
    r = owner.patch(f"{URL}/{memory['id']}", data, HTTP_IF_MATCH=memory["etag"])
    assert r.status_code == 422, r.content
    assert owner.get(f"{URL}/{memory['id']}").json()["etag"] == '"1"'


def test_delete_with_if_match(owner):
    memory = create(owner).json()
    url = f"{URL}/{memory['id']}"
    assert owner.delete(url).status_code == 428
    assert owner.delete(url, HTTP_IF_MATCH='"9"').status_code == 412
    assert owner.delete(url, HTTP_IF_MATCH=memory["etag"]).status_code == 204
    assert owner.get(url).status_code == 404
    assert AuditEvent.objects.filter(action="memory.delete", object_id=memory["id"]).exists()


def test_list_filters_and_pagination(owner):
    a = create(owner, name="a", labels=["team"]).json()
    b = create(owner, name="b", labels=["team", "eng"]).json()
    create(owner, name="c")
    r = owner.get(URL)
    assert r.json()["count"] == 3
    assert [m["name"] for m in r.json()["results"]] == ["c", "b", "a"]
    assert {m["id"] for m in owner.get(URL, {"label": "team"}).json()["results"]} == {
        a["id"],
        b["id"],
    }
    r = owner.get(f"{URL}?label=team&label=eng")
    assert [m["id"] for m in r.json()["results"]] == [b["id"]]
    assert owner.get(URL, {"kind": "file"}).json()["count"] == 3
    assert owner.get(URL, {"type": "postgres"}).json()["count"] == 3
    page = owner.get(URL, {"limit": 2}).json()
    assert len(page["results"]) == 2 and page["next"]
    assert owner.get(URL, {"kind": "nosuch"}).status_code == 422
    assert owner.get(URL, {"type": "nosuch"}).status_code == 422


def test_record_kind_through_the_catalog(owner, fake_record_kind, provider):
    record = {"type": "fake_backend", "provider_id": provider.id}
    r = create(owner, name="User facts", namespace="ns-1", **record)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["kind"] == "record" and body["namespace"] == "ns-1"
    # The file stats are null for a record memory.
    assert (body["file_count"], body["content_bytes"], body["history_bytes"]) == (
        None,
        None,
        None,
    )
    assert body["inherited_guide"]
    assert owner.get(URL, {"kind": "record"}).json()["count"] == 1
    assert owner.get(URL, {"type": "fake_backend"}).json()["count"] == 1
    assert owner.get(URL, {"kind": "file"}).json()["count"] == 0
    listed = owner.get(URL).json()["results"][0]
    assert listed["file_count"] is None
    # Another memory on the same namespace is refused by the database.
    r = create(owner, name="Again", namespace="ns-1", **record)
    assert r.status_code == 409 and error_of(r)["code"] == "already_exists"
    # always_load does not apply; type/namespace never change.
    r = create(owner, name="x", always_load=["a.md"], **record)
    assert r.status_code == 422
    assert "always_load" in error_of(r)["message"]
    assert Memory.objects.count() == 1
    url = f"{URL}/{body['id']}"
    r = owner.patch(url, {"always_load": ["a.md"]}, HTTP_IF_MATCH=body["etag"])
    assert r.status_code == 422
    r = owner.patch(url, {"namespace": "other"}, HTTP_IF_MATCH=body["etag"])
    assert r.status_code == 422
    # Deleting calls the kind's hook.
    assert owner.delete(url, HTTP_IF_MATCH=body["etag"]).status_code == 204
    assert fake_record_kind.deleted == [body["id"]]


def test_file_memory_refuses_record_fields(owner, fake_record_kind):
    r = create(owner, namespace="ns")
    assert r.status_code == 422
    assert "namespace" in error_of(r)["message"]
