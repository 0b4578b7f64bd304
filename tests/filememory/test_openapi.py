"""The served OpenAPI schema documents the file memory, memory provider and record contracts."""

from __future__ import annotations

import re

import pytest
from django.test import Client

FILES = "/api/v1/memories/{memory_id}/files"
FILE = "/api/v1/memories/{memory_id}/files/{file_path}"
REVISIONS = "/api/v1/memories/{memory_id}/revisions"
REVISION = "/api/v1/memories/{memory_id}/revisions/{revision_id}"
RESTORE = "/api/v1/memories/{memory_id}/revisions/{revision_id}/restore"
PROVIDERS = "/api/v1/memory-providers"
PROVIDER = "/api/v1/memory-providers/{provider_id}"
PROVIDER_TEST = "/api/v1/memory-providers/{provider_id}/test"
RECORDS = "/api/v1/memories/{memory_id}/records"
RECORD = "/api/v1/memories/{memory_id}/records/{record_id}"
RECORD_SEARCH = "/api/v1/memories/{memory_id}/records/search"


@pytest.fixture
def schema(db) -> dict:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def resolve(schema: dict, node: dict) -> dict:
    """Follows a $ref, also one wrapped in allOf (as a field with a description is)."""
    if "allOf" in node:
        node = node["allOf"][0]
    if "$ref" in node:
        return schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def request_schema(schema: dict, path: str, method: str) -> dict:
    body = schema["paths"][path][method]["requestBody"]["content"]["application/json"]
    return resolve(schema, body["schema"])


def response_schema(schema: dict, path: str, method: str, status: str) -> dict:
    answer = schema["paths"][path][method]["responses"][status]
    return resolve(schema, answer["content"]["application/json"]["schema"])


def parameters(schema: dict, path: str, method: str, where: str = "query") -> dict:
    params = schema["paths"][path][method].get("parameters", [])
    return {p["name"]: p for p in params if p["in"] == where}


def test_files_are_listed_in_pages_without_content(schema):
    query = parameters(schema, FILES, "get")
    assert set(query) == {"prefix", "limit", "offset"}
    assert query["limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
        "default": 50,
    }

    page = response_schema(schema, FILES, "get", "200")
    assert set(page["required"]) == {"count", "next", "previous", "results"}
    entry = resolve(schema, page["properties"]["results"]["items"])
    assert "content" not in entry["properties"]
    assert {"path", "size", "version", "etag", "principal_id", "run_id"} <= set(entry["required"])
    assert entry["properties"]["run_id"]["nullable"] is True


def test_putting_a_file_takes_its_content_and_an_optional_if_match(schema):
    body = request_schema(schema, FILE, "put")
    assert set(body["properties"]) == {"content"}
    assert body["required"] == ["content"]

    if_match = parameters(schema, FILE, "put", "header")["If-Match"]
    assert not if_match.get("required", False)  # absent: create only
    responses = schema["paths"][FILE]["put"]["responses"]
    assert {s for s in responses if s < "400"} == {"200", "201"}
    created = response_schema(schema, FILE, "put", "201")
    assert {"content", "etag", "version"} <= set(created["required"])
    assert "ETag" in responses["201"]["headers"]


def test_deleting_a_file_needs_if_match_and_answers_204(schema):
    assert parameters(schema, FILE, "delete", "header")["If-Match"]["required"] is True
    assert schema["paths"][FILE]["delete"]["responses"]["204"].get("content") is None


def test_history_revisions_restore_and_purge(schema):
    assert set(parameters(schema, REVISIONS, "get")) == {"path", "limit", "offset"}
    page = response_schema(schema, REVISIONS, "get", "200")
    revision = resolve(schema, page["properties"]["results"]["items"])
    assert "content" not in revision["properties"]
    action = resolve(schema, revision["properties"]["action"])
    assert action["enum"] == ["create", "update", "delete", "rename", "restore"]
    assert revision["properties"]["version"]["nullable"] is True

    detail = response_schema(schema, REVISION, "get", "200")
    assert detail["properties"]["content"]["nullable"] is True  # a delete has no content

    assert "requestBody" not in schema["paths"][RESTORE]["post"]
    assert "If-Match" in parameters(schema, RESTORE, "post", "header")
    restored = response_schema(schema, RESTORE, "post", "200")
    assert "content" in restored["required"]

    assert set(parameters(schema, REVISIONS, "delete")) == {"path"}
    assert response_schema(schema, REVISIONS, "delete", "200")["required"] == ["deleted"]


def test_memory_providers(schema):
    create = request_schema(schema, PROVIDERS, "post")
    assert set(create["required"]) == {"type", "name"}
    assert set(create["properties"]) == {"type", "name", "config", "credential", "enabled"}
    assert resolve(schema, create["properties"]["type"])["enum"] == ["mem0_platform", "mem0_oss"]
    credential = resolve(schema, create["properties"]["credential"])
    assert set(credential["properties"]) == {"api_key", "admin_api_key"}
    config = resolve(schema, create["properties"]["config"])
    assert set(config["properties"]) == {"base_url", "connect_timeout", "read_timeout"}

    provider = response_schema(schema, PROVIDERS, "post", "201")
    assert "credential" not in provider["properties"]
    assert {"id", "type", "has_credential", "etag", "enabled"} <= set(provider["required"])

    change = request_schema(schema, PROVIDER, "patch")
    assert "type" not in change["properties"] and not change.get("required")
    assert parameters(schema, PROVIDER, "patch", "header")["If-Match"]["required"] is True
    assert parameters(schema, PROVIDER, "delete", "header")["If-Match"]["required"] is True
    assert set(parameters(schema, PROVIDERS, "get")) == {"limit", "offset"}
    assert response_schema(schema, PROVIDER_TEST, "post", "200")["required"] == [
        "ok",
        "provider_id",
        "type",
    ]


def test_records(schema):
    query = parameters(schema, RECORDS, "get")
    assert query["limit"]["schema"]["maximum"] == 200
    assert query["offset"]["schema"]["maximum"] == 1_000_000
    page = response_schema(schema, RECORDS, "get", "200")
    record = resolve(schema, page["properties"]["results"]["items"])
    assert {"id", "text", "metadata", "created_at", "updated_at"} <= set(record["required"])
    assert "score" not in record["required"]

    add = request_schema(schema, RECORDS, "post")
    assert add["required"] == ["text"] and set(add["properties"]) == {"text", "metadata"}
    assert "201" in schema["paths"][RECORDS]["post"]["responses"]
    change = request_schema(schema, RECORD, "patch")
    assert set(change["properties"]) == {"text", "metadata"} and not change.get("required")

    search = request_schema(schema, RECORD_SEARCH, "post")
    assert search["required"] == ["query"]
    assert (search["properties"]["k"]["minimum"], search["properties"]["k"]["maximum"]) == (1, 100)
    found = response_schema(schema, RECORD_SEARCH, "post", "200")
    assert resolve(schema, found["properties"]["results"]["items"]) == record


# -- patterns and enums that state what the services check ---------------------------------
FILE_PATHS = {
    "prefs.md": True,
    "notes/2024/todo.md": True,
    "şirket/müşteri.md": True,
    ".hidden": True,
    "...": True,
    "a" * 255: True,
    "": False,
    "/abs.md": False,
    "a//b": False,
    "a/": False,
    "./a": False,
    "a/../b": False,
    "..": False,
    "a\\b": False,
    "a\nb": False,
    "a\x7fb": False,
    "a\x85b": False,
    "a" * 256: False,
}


def test_file_paths_follow_the_documented_pattern(schema):
    """The pattern is clean_path's rule, character for character (bytes aside)."""
    from filememory.services.paths import clean_path
    from memoryhub.errors import ApiError

    pattern = parameters(schema, FILE, "get", "path")["file_path"]["schema"]["pattern"]
    assert parameters(schema, REVISIONS, "get")["path"]["schema"]["pattern"] == pattern
    assert parameters(schema, REVISIONS, "delete")["path"]["schema"]["pattern"] == pattern
    for path, valid in FILE_PATHS.items():
        assert bool(re.search(pattern, path)) is valid, path
        try:
            clean_path(path)
            accepted = True
        except ApiError:
            accepted = False
        assert accepted is valid, path


def test_prefixes_follow_the_documented_pattern(schema, owner):
    from filememory.services.paths import clean_folder
    from memoryhub.errors import ApiError

    pattern = parameters(schema, FILES, "get")["prefix"]["schema"]["pattern"]
    files = {path: valid for path, valid in FILE_PATHS.items() if path not in ("", "a/")}
    folders = {
        **files,
        **{path + "/": valid for path, valid in files.items()},
        "": True,
        "/": True,
        "a//": False,
    }
    for prefix, valid in folders.items():
        assert bool(re.search(pattern, prefix)) is valid, prefix
        try:
            clean_folder(prefix)
            accepted = True
        except ApiError:
            accepted = False
        assert accepted is valid, prefix
    memory = owner.post("/api/v1/memories", {"name": "Notes"}).json()
    assert owner.get(f"/api/v1/memories/{memory['id']}/files?prefix=a/../b").status_code == 422


def test_revisions_name_only_the_principals_that_change_files(schema, owner, runner):
    """api_key and run, and staff: people correct files in the panel."""
    revision = response_schema(schema, REVISION, "get", "200")
    enum = resolve(schema, revision["properties"]["principal_type"])["enum"]
    assert enum == ["api_key", "run", "staff"]
    memory = owner.post("/api/v1/memories", {"name": "Notes"}).json()
    runner.put(f"/api/v1/memories/{memory['id']}/files/a.md", {"content": "x"})
    listed = owner.get(f"/api/v1/memories/{memory['id']}/revisions").json()["results"]
    assert [r["principal_type"] for r in listed] == ["api_key"]


def test_a_record_change_needs_text_or_metadata(schema):
    change = request_schema(schema, RECORD, "patch")
    assert change["minProperties"] == 1  # {} is 422: "give text, metadata or both"
