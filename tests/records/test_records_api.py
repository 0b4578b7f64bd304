"""/api/v1/memories/{id}/records on both backends: reading, writing, limits and failures."""

from __future__ import annotations

import json
import uuid

import pytest

from memoryhub.models import AuditEvent, Memory
from tests.conftest import error_of
from tests.records.conftest import record_memory


def url(memory: Memory, suffix: str = "") -> str:
    return f"/api/v1/memories/{memory.id}/records{suffix}"


def add(api, memory, text="The user prefers metric units", **extra):
    response = api.post(url(memory), {"text": text, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def test_add_get_patch_delete_a_record(runner, memory):
    record = add(runner, memory, metadata={"source": "panel"})
    assert set(record) == {"id", "text", "metadata", "created_at", "updated_at"}
    assert record["text"] == "The user prefers metric units"
    assert record["metadata"] == {"source": "panel"}
    assert record["created_at"].endswith("Z")

    got = runner.get(url(memory, f"/{record['id']}"))
    assert got.status_code == 200 and got.json() == record
    assert "ETag" not in got  # records have no version: the last write wins

    patched = runner.patch(url(memory, f"/{record['id']}"), {"text": "Metric, always"})
    assert patched.status_code == 200
    assert patched.json()["text"] == "Metric, always"
    assert patched.json()["metadata"] == {"source": "panel"}

    assert runner.delete(url(memory, f"/{record['id']}")).status_code == 204
    assert runner.get(url(memory, f"/{record['id']}")).status_code == 404


def test_search_answers_records_with_a_score(reader, runner, memory):
    add(runner, memory, "The user prefers metric units")
    add(runner, memory, "The user lives in Ankara")
    response = reader.post(url(memory, "/search"), {"query": "which units", "k": 1})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert len(results) == 1
    assert results[0]["text"] == "The user prefers metric units"
    assert 0 < results[0]["score"] <= 1
    assert set(results[0]) == {"id", "text", "metadata", "created_at", "updated_at", "score"}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"query": ""},
        {"query": 5},
        {"query": "x", "k": 0},
        {"query": "x", "k": 101},
        {"query": "x", "k": "3"},
        {"query": "x", "other": 1},
        [],
    ],
)
def test_bad_searches_are_422(reader, memory, body):
    response = reader.post(url(memory, "/search"), body)
    assert response.status_code == 422, response.content


def test_list_pages_with_limit_and_offset(reader, runner, memory):
    texts = [f"record number {i}" for i in range(5)]
    for text in texts:
        add(runner, memory, text)
    first = reader.get(url(memory) + "?limit=2")
    assert first.status_code == 200
    data = first.json()
    assert data["count"] == 5
    assert [r["text"] for r in data["results"]] == ["record number 4", "record number 3"]
    assert data["previous"] is None
    assert "offset=2" in data["next"] and "limit=2" in data["next"]
    last = reader.get(url(memory) + "?limit=2&offset=4").json()
    assert [r["text"] for r in last["results"]] == ["record number 0"]
    assert last["next"] is None and "offset=2" in last["previous"]


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=x", "offset=-1", "offset=a"])
def test_bad_paging_is_422(reader, memory, query):
    assert reader.get(url(memory) + "?" + query).status_code == 422


def test_text_limits(runner, memory, settings):
    for bad in ("", "   ", 5, None, ["x"]):
        response = runner.post(url(memory), {"text": bad})
        assert response.status_code == 422, bad
    assert runner.post(url(memory), {"text": "x" * 8001}).status_code == 422
    assert runner.post(url(memory), {"text": "é" * 8000}).status_code == 201
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "memory.record_chars": 10}
    assert runner.post(url(memory), {"text": "x" * 11}).status_code == 422
    assert runner.post(url(memory), {"text": "y" * 10}).status_code == 201


@pytest.mark.parametrize(
    "body", [{"metadata": {}}, {"text": "x", "metadata": "x"}, {"text": "x", "id": "y"}, []]
)
def test_bad_adds_are_422(runner, memory, server_of, body):
    response = runner.post(url(memory), body)
    assert response.status_code == 422
    assert server_of(memory.provider).requests == []


def test_patch_needs_a_change(runner, memory):
    record = add(runner, memory)
    response = runner.patch(url(memory, f"/{record['id']}"), {})
    assert response.status_code == 422
    response = runner.patch(url(memory, f"/{record['id']}"), {"metadata": {"k": 1}})
    assert response.json()["metadata"] == {"k": 1}
    assert response.json()["text"] == record["text"]


def test_reading_needs_read_and_writing_needs_run(reader, runner, memory, anonymous):
    record = add(runner, memory)
    assert reader.get(url(memory)).status_code == 200
    assert reader.get(url(memory, f"/{record['id']}")).status_code == 200
    assert reader.post(url(memory, "/search"), {"query": "units"}).status_code == 200
    assert reader.post(url(memory), {"text": "x"}).status_code == 403
    assert reader.patch(url(memory, f"/{record['id']}"), {"text": "x"}).status_code == 403
    assert reader.delete(url(memory, f"/{record['id']}")).status_code == 403
    assert anonymous.get(url(memory)).status_code == 401


def test_another_workspace_and_unknown_ids_are_404(stranger, runner, memory):
    record = add(runner, memory)
    assert stranger.get(url(memory)).status_code == 404
    assert stranger.get(url(memory, f"/{record['id']}")).status_code == 404
    assert stranger.post(url(memory), {"text": "x"}).status_code == 404
    assert stranger.post(url(memory, "/search"), {"query": "x"}).status_code == 404
    assert stranger.delete(url(memory, f"/{record['id']}")).status_code == 404
    assert runner.get("/api/v1/memories/mem_nothere/records").status_code == 404
    assert runner.get(url(memory, f"/{uuid.uuid4()}")).status_code == 404
    assert runner.get(url(memory, "/not-a-uuid")).status_code == 404
    assert runner.delete(url(memory, f"/{uuid.uuid4()}")).status_code == 404


def test_a_record_of_another_memory_on_the_same_provider_is_404(tenant, runner, memory):
    other = record_memory(tenant, memory.provider, namespace="ns-2")
    theirs = add(runner, other, "belongs to the other memory")
    assert runner.get(url(memory, f"/{theirs['id']}")).status_code == 404
    assert runner.patch(url(memory, f"/{theirs['id']}"), {"text": "x"}).status_code == 404
    assert runner.delete(url(memory, f"/{theirs['id']}")).status_code == 404
    assert runner.get(url(other, f"/{theirs['id']}")).json()["text"] == theirs["text"]


def test_a_file_memory_has_no_records(tenant, runner):
    memory = Memory.objects.create(
        workspace=tenant.workspace, kind="file", type="postgres", name="Files"
    )
    assert runner.get(url(memory)).status_code == 404


def test_a_disabled_provider_is_422_disabled(runner, memory, server_of):
    memory.provider.enabled = False
    memory.provider.save()
    for response in (
        runner.get(url(memory)),
        runner.post(url(memory), {"text": "x"}),
        runner.post(url(memory, "/search"), {"query": "x"}),
    ):
        assert response.status_code == 422
        assert error_of(response)["reason"] == "disabled"
    assert server_of(memory.provider).requests == []


def test_a_backend_that_cannot_answer_is_503_with_the_dependency(runner, memory, server_of):
    server_of(memory.provider).fail(502)
    for response in (
        runner.get(url(memory)),
        runner.post(url(memory, "/search"), {"query": "x"}),
        runner.post(url(memory), {"text": "x"}),
    ):
        assert response.status_code == 503
        error = error_of(response)
        assert error["code"] == "unavailable"
        assert error["dependency"] == f"memory:{memory.type}"


def test_a_write_the_backend_does_not_confirm_is_409_write_unconfirmed(runner, memory, server_of):
    server = server_of(memory.provider)
    server.drop_after_write = True
    response = runner.post(url(memory), {"text": "maybe stored"})
    assert response.status_code == 409
    error = error_of(response)
    assert (error["code"], error["reason"]) == ("conflict", "write_unconfirmed")
    assert "list or search" in error["message"]
    adds = [r for r in server.requests if r["method"] == "POST" and "search" not in r["path"]]
    assert len(adds) == 1  # never retried


def test_a_refused_credential_is_503_naming_the_provider(runner, memory, server_of):
    server_of(memory.provider).refuse_auth = True
    response = runner.get(url(memory))
    assert response.status_code == 503
    error = error_of(response)
    assert error["reason"] == "provider_auth"
    assert error["provider_id"] == memory.provider_id


def test_changes_are_audited_with_the_record_id_never_the_text(runner, memory, server_of):
    secret_text = "The user's PIN is 4321"
    record = add(runner, memory, secret_text)
    runner.patch(url(memory, f"/{record['id']}"), {"text": secret_text + "!"})
    runner.delete(url(memory, f"/{record['id']}"))
    server_of(memory.provider).drop_after_write = True
    runner.post(url(memory), {"text": secret_text})
    events = list(
        AuditEvent.objects.filter(object_type="record")
        .order_by("id")
        .values("action", "object_id", "details")
    )
    assert [(e["action"], e["object_id"]) for e in events[:3]] == [
        ("record.add", record["id"]),
        ("record.update", record["id"]),
        ("record.delete", record["id"]),
    ]
    assert events[0]["details"] == {"memory": memory.id}
    assert events[3]["action"] == "record.add" and events[3]["details"]["confirmed"] is False
    assert "PIN" not in json.dumps(events)


def test_reads_are_not_audited(reader, runner, memory):
    add(runner, memory)
    before = AuditEvent.objects.count()
    reader.get(url(memory))
    reader.post(url(memory, "/search"), {"query": "x"})
    assert AuditEvent.objects.count() == before


def test_metadata_nested_too_deep_is_422_and_writes_nothing(runner, memory):
    deep: object = "x"
    for _ in range(33):
        deep = [deep]
    response = runner.post(url(memory), {"text": "deep", "metadata": {"m": deep}})
    assert response.status_code == 422, response.content
    assert "nested" in error_of(response)["message"]
    assert runner.get(url(memory)).json()["count"] == 0
    assert add(runner, memory, metadata={"m": [[["fine"]]]})["metadata"] == {"m": [[["fine"]]]}
