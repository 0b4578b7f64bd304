"""The served OpenAPI schema documents the facts API's real wire contract."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.facts.conftest import save

RUN = "/v0/memory"
# The fields of a save (facts-memory.md, "Writing facts").
WRITE_FIELDS = {"path", "text", "tags", "confidence", "replaces", "key", "written_by"}
STAFF = "/api/v1/agents/{agent_id}/facts"
_SCHEMA: dict = {}


def _is_fact_id_pattern(pattern: str) -> None:
    """The documented pattern takes the ids the API hands out and nothing else."""
    assert re.search(pattern, "m_1") and re.search(pattern, "m_123456789012345678")
    for wrong in ("m_0", "m_01", "1", "m_1x", "m_1234567890123456789"):
        assert not re.search(pattern, wrong), wrong


@pytest.fixture
def schema(db) -> dict:
    if not _SCHEMA:
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert response.status_code == 200
        _SCHEMA.update(response.json())
    return _SCHEMA


def resolve(schema: dict, node: dict) -> dict:
    """Follow a ``$ref`` (or a lone ``allOf`` around one) to the component."""
    if "allOf" in node and len(node["allOf"]) == 1:
        node = node["allOf"][0]
    if "$ref" in node:
        return schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def operation(schema: dict, path: str, method: str) -> dict:
    return schema["paths"][path][method]


def request_body(schema: dict, path: str, method: str = "post") -> dict:
    content = operation(schema, path, method)["requestBody"]["content"]
    return resolve(schema, content["application/json"]["schema"])


def answer(schema: dict, path: str, method: str, status: str = "200") -> dict:
    content = operation(schema, path, method)["responses"][status]["content"]
    return resolve(schema, content["application/json"]["schema"])


def query_parameters(schema: dict, path: str, method: str = "get") -> dict:
    parameters = operation(schema, path, method).get("parameters", [])
    return {p["name"]: p for p in parameters if p["in"] == "query"}


def items(schema: dict, prop: dict) -> dict:
    assert prop["type"] == "array"
    return resolve(schema, prop["items"])


# -- the fact, as served --------------------------------------------------------------------
def test_the_documented_fact_is_the_served_fact(schema, alice):
    served = alice.get(f"{RUN}/facts/{save(alice, tags=['a'])['id']}").json()
    fact = answer(schema, f"{RUN}/facts/{{fact_id}}", "get")
    assert set(fact["properties"]) == set(served) == set(fact["required"])
    source = resolve(schema, fact["properties"]["source"])
    assert set(source["properties"]) == set(served["source"]) == set(source["required"])
    # person: a correction made by staff in the panel (issue 14); the API writes only the two.
    assert resolve(schema, source["properties"]["written_by"])["enum"] == [
        "code",
        "model",
        "person",
    ]
    _is_fact_id_pattern(fact["properties"]["id"]["pattern"])
    assert fact["properties"]["created_at"]["format"] == "date-time"
    assert fact["properties"]["confidence"]["maximum"] == 1


def test_search_hits_are_facts_with_a_nullable_score(schema, alice):
    save(alice, text="the sole director")
    served = alice.post(f"{RUN}/search", {"query": "direct"}).json()
    results = answer(schema, f"{RUN}/search", "post")
    assert set(results["properties"]) == set(served) == {"facts"}
    hit = items(schema, results["properties"]["facts"])
    assert set(hit["properties"]) == set(served["facts"][0])
    assert hit["properties"]["score"]["nullable"] is True


def test_list_pages_and_versions_share_the_fact_shape(schema, alice):
    fact_id = save(alice)["id"]
    served = alice.get(f"{RUN}/facts").json()
    fact = answer(schema, f"{RUN}/facts/{{fact_id}}", "get")
    assert answer(schema, f"{STAFF}/{{fact_id}}", "get") == fact
    for path in (f"{RUN}/facts", STAFF):
        page = answer(schema, path, "get")
        assert set(page["properties"]) == set(served) == {"facts", "next"}
        assert page["properties"]["next"]["nullable"] is True
        assert items(schema, page["properties"]["facts"]) == fact
    served = alice.get(f"{RUN}/facts/{fact_id}/versions").json()
    for path in (f"{RUN}/facts/{{fact_id}}/versions", f"{STAFF}/{{fact_id}}/versions"):
        versions = answer(schema, path, "get")
        assert set(versions["properties"]) == set(served) == {"versions"}
        assert items(schema, versions["properties"]["versions"]) == fact
        assert set(fact["properties"]) == set(served["versions"][0])


# -- requests -------------------------------------------------------------------------------
def test_saving_a_fact_documents_every_field_and_both_answers(schema):
    body = request_body(schema, f"{RUN}/facts")
    props = body["properties"]
    assert set(props) == WRITE_FIELDS
    assert sorted(body["required"]) == ["path", "text"]
    assert (props["text"]["minLength"], props["text"]["maxLength"]) == (1, 4000)
    assert props["path"]["maxLength"] == 300
    assert props["tags"]["maxItems"] == 20
    tag = props["tags"]["items"]["pattern"]
    assert (
        re.search(tag, "prefs:lang") and not re.search(tag, "a b") and not re.search(tag, "x" * 51)
    )
    assert (props["confidence"]["minimum"], props["confidence"]["maximum"]) == (0, 1)
    key = props["key"]["pattern"]
    assert (
        re.search(key, "user.lang-1")
        and not re.search(key, "k/1")
        and not re.search(key, "k" * 201)
    )
    _is_fact_id_pattern(props["replaces"]["pattern"])
    assert props["written_by"]["default"] == "code"
    fact = answer(schema, f"{RUN}/facts/{{fact_id}}", "get")
    assert answer(schema, f"{RUN}/facts", "post", "201") == fact
    assert answer(schema, f"{RUN}/facts", "post", "200") == fact


def test_search_bodies_and_parameters(schema):
    for path in (f"{RUN}/search", f"{STAFF}/search"):
        body = request_body(schema, path)
        assert set(body["properties"]) == {"query", "path", "tags", "k"}
        assert "required" not in body  # an empty body searches for the newest
        k = body["properties"]["k"]
        assert (k["minimum"], k["maximum"], k["default"]) == (1, 50, 5)
    staff_get = query_parameters(schema, f"{STAFF}/search")
    assert set(staff_get) == {"query", "path", "tags", "k"}
    assert staff_get["k"]["schema"]["maximum"] == 50


@pytest.mark.parametrize("path", [f"{RUN}/facts", STAFF])
def test_listing_documents_its_query_parameters(schema, path):
    parameters = query_parameters(schema, path)
    assert set(parameters) == {"path", "tags", "limit", "before"}
    limit = parameters["limit"]["schema"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 200, 50)
    _is_fact_id_pattern(parameters["before"]["schema"]["pattern"])
    assert not any(p.get("required") for p in parameters.values())


def test_context_tools_and_tool_calls(schema):
    context = request_body(schema, f"{RUN}/context")
    paths = context["properties"]["paths"]
    assert (paths["minItems"], paths["maxItems"], paths["nullable"]) == (1, 20, True)
    assert context["properties"]["k"]["default"] == 8
    assert answer(schema, f"{RUN}/context", "post")["required"] == ["context"]

    assert query_parameters(schema, f"{RUN}/tools")["paths"]["schema"]["type"] == "array"
    definitions = answer(schema, f"{RUN}/tools", "get")["properties"]["definitions"]
    function = resolve(schema, items(schema, definitions)["properties"]["function"])
    assert set(function["required"]) == {"name", "description", "parameters"}

    call = request_body(schema, f"{RUN}/tools/call")
    assert call["required"] == ["tool_call"]
    envelope = resolve(schema, call["properties"]["tool_call"])
    assert set(envelope["required"]) == {"id", "function"}
    assert envelope["properties"]["id"]["maxLength"] == 200
    message = answer(schema, f"{RUN}/tools/call", "post")
    assert set(message["required"]) == {"role", "tool_call_id", "content"}


def test_deletes_answer_204_without_a_body(schema):
    for path in (f"{RUN}/facts/{{fact_id}}", f"{STAFF}/{{fact_id}}"):
        responses = operation(schema, path, "delete")["responses"]
        assert [s for s in responses if s < "400"] == ["204"]
        assert "content" not in responses["204"]


# -- what the patterns promise is what the API does -----------------------------------------
@pytest.mark.parametrize("path", [f"{RUN}/facts", STAFF])
def test_an_empty_before_names_no_fact(schema, alice, agent, owner, path):
    """The before pattern takes no ""; the API used to read it as "from the top"."""
    assert not re.search(query_parameters(schema, path)["before"]["schema"]["pattern"], "")
    client = alice if path.startswith(RUN) else owner
    url = path.replace("{agent_id}", agent.id)
    response = client.get(f"{url}?before=")
    assert response.status_code == 422, response.content
    assert "before must be a fact id" in response.json()["error"]["message"]


def test_tags_follow_the_documented_patterns(schema, alice):
    tag = request_body(schema, f"{RUN}/facts")["properties"]["tags"]["items"]["pattern"]
    listed = query_parameters(schema, f"{RUN}/facts")["tags"]["schema"]["pattern"]
    assert query_parameters(schema, f"{STAFF}/search")["tags"]["schema"]["pattern"] == listed
    for tags, valid in (
        ("", True),
        ("a", True),
        ("prefs:lang,x.y_z-1", True),
        (",".join(["t"] * 20), True),
        (",".join(["t"] * 21), False),
        ("a b", False),
        ("ü", False),
        ("a,", False),
        ("x" * 51, False),
    ):
        assert bool(re.search(listed, tags)) is valid, tags
        if tags and "," not in tags:
            assert bool(re.search(tag, tags)) is valid, tags
        response = alice.get(f"{RUN}/facts", {"tags": tags})
        assert (response.status_code == 200) is valid, (tags, response.content)


def test_paths_follow_the_documented_pattern(schema, alice):
    pattern = query_parameters(schema, f"{RUN}/facts")["path"]["schema"]["pattern"]
    assert request_body(schema, f"{RUN}/facts")["properties"]["path"]["pattern"] == pattern
    for path, valid in (
        ("", True),
        ("/", True),
        ("notes", True),
        ("notes/", True),
        ("şirket/müşteriler/", True),
        ("users/{user}/", True),
        ("a:b@c-d.e_f/", True),
        ("notes//", False),
        ("/notes", False),
        ("a b/", False),
        ("a/b\\c", False),
        ("x" * 101, False),
    ):
        assert bool(re.search(pattern, path)) is valid, path
        response = alice.get(f"{RUN}/facts", {"path": path})
        assert (response.status_code == 200) is valid, (path, response.content)
