"""Requests past Django's and memoryhub's reading limits: a clear 4xx, never a 500.

More query parameters or form fields than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` (1,000), more
files than ``DATA_UPLOAD_MAX_NUMBER_FILES``, and JSON nested deeper than
:data:`memoryhub.parsers.MAX_DEPTH` (64 levels), wherever JSON comes in: REST bodies, tool
arguments, the admin's JSON fields.
"""

from __future__ import annotations

import json
import logging
import time

import pytest
from django.contrib.admin.utils import quote
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousMultipartForm,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http.multipartparser import MultiPartParserError
from django.test import Client

from facts.models import Fact
from memoryhub.errors import ApiError, from_exception
from memoryhub.models import Agent, Run
from memoryhub.tools import parse_arguments
from tests.conftest import Api, error_of
from tests.memoryhub.test_admin import form_of
from threads.models import ToolCall

MAX_DEPTH = 64  # memoryhub.parsers.MAX_DEPTH, as the API answers it
MANY = "&".join(f"p{i}=1" for i in range(1001))  # one over Django's 1,000
DEEP = f"nested more than {MAX_DEPTH} levels deep"  # a JSON text
RULE = f"JSON may nest arrays and objects at most {MAX_DEPTH} levels deep"  # a value


def nested(levels: int, leaf: object = 1) -> object:
    """``leaf`` inside ``levels`` arrays and objects, alternately."""
    value = leaf
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def tracebacks(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


@pytest.fixture
def staff(db, django_user_model) -> Client:
    user = django_user_model.objects.create_superuser("ops", "ops@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


# -- too many fields -------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["anonymous", "owner", "run_api"])
@pytest.mark.parametrize("path", ["/api/v1/agents", "/v0/memory/facts"])
def test_over_1000_query_parameters_are_a_400_in_the_envelope(request, caplog, who, path):
    client = request.getfixturevalue(who)
    response = client.get(f"{path}?{MANY}")
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["message"] == "too many query parameters or form fields: at most 1000"
    assert not tracebacks(caplog)


def test_1000_query_parameters_are_still_read(owner):
    few = "&".join(f"p{i}=1" for i in range(1000))
    assert owner.get(f"/api/v1/agents?{few}").status_code == 200


def test_over_1000_query_parameters_on_a_tool_call_change_nothing(run_api, caplog):
    tool_call = {"id": "c1", "function": {"name": "save_memory", "arguments": '{"text": "x"}'}}
    response = run_api.post(
        f"/v0/memory/tools/call?{MANY}", {"paths": ["users/{user}/"], "tool_call": tool_call}
    )
    assert response.status_code == 400, response.content
    assert not Fact.objects.exists() and not ToolCall.objects.exists()
    assert not tracebacks(caplog)


def _plain_400(response, caplog) -> None:
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert b"Traceback" not in response.content
    assert not tracebacks(caplog)  # one warning line: the client's fault, not a bug


@pytest.mark.parametrize("path", ["/panel/login/", "/admin/login/"])
def test_the_login_pages_answer_a_plain_400_page(db, caplog, path):
    _plain_400(Client().get(f"{path}?{MANY}"), caplog)
    assert any("DATA_UPLOAD_MAX_NUMBER_FIELDS" in r.getMessage() for r in caplog.records)


def test_a_panel_page_answers_a_plain_400_page(staff, tenant, agent, caplog):
    path = f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/"
    assert staff.get(path).status_code == 200
    _plain_400(staff.get(f"{path}?{MANY}"), caplog)


def test_a_login_form_with_over_1000_fields_is_a_plain_400(db, caplog):
    response = Client().post(
        "/panel/login/", MANY, content_type="application/x-www-form-urlencoded"
    )
    _plain_400(response, caplog)


def test_an_upload_of_too_many_files_is_a_plain_400(db, caplog):
    parts = "".join(
        f'--B\r\nContent-Disposition: form-data; name="f{i}"; filename="{i}.txt"\r\n\r\nx\r\n'
        for i in range(101)
    )
    response = Client().post(
        "/panel/login/", f"{parts}--B--\r\n", content_type="multipart/form-data; boundary=B"
    )
    _plain_400(response, caplog)


@pytest.mark.parametrize(
    ("exception", "status", "message"),
    [
        (TooManyFieldsSent("x"), 400, "too many query parameters or form fields: at most 1000"),
        (TooManyFilesSent("x"), 400, "too many files: at most 100"),
        (RequestDataTooBig("x"), 413, "request body too large"),
        (SuspiciousMultipartForm("boundary <script>"), 400, "malformed request"),
        (MultiPartParserError("Invalid boundary"), 400, "malformed request"),
        (BadRequest("no"), 400, "malformed request"),
    ],
)
def test_what_django_refuses_while_reading_a_request_is_a_4xx(exception, status, message):
    # Whatever path raises it (a DRF view reading its query, a plain view reading a form).
    error = from_exception(exception)
    assert isinstance(error, ApiError)
    assert (error.status, error.message) == (status, message)


# -- nesting: REST bodies --------------------------------------------------------------------


@pytest.mark.parametrize("levels", [MAX_DEPTH, 100, 950])
def test_a_run_input_nested_too_deep_is_400_and_starts_no_run(owner, thread, levels):
    # The body's object is one level more than its input.
    response = owner.post(f"/api/v1/threads/{thread.id}/runs", {"input": nested(levels)})
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["message"] == f"malformed JSON: {DEEP}"
    assert not Run.objects.filter(thread=thread).exists()


def test_a_body_nested_exactly_64_levels_is_taken_and_shown(owner, thread, staff):
    value = nested(MAX_DEPTH - 1, "deepest")
    response = owner.post(f"/api/v1/threads/{thread.id}/runs", {"input": value})
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.input == value
    # What the API stores, the admin shows (the probe's 925-level input was a 500 there).
    page = staff.get(f"/admin/memoryhub/run/{quote(run.pk)}/change/")
    assert page.status_code == 200 and b"deepest" in page.content


def test_a_deep_body_is_refused_whatever_endpoint_takes_it(owner, run_api):
    response = owner.post("/api/v1/agents", {"name": "x", "toolset": nested(100)})
    assert response.status_code == 400 and DEEP in error_of(response)["message"]
    assert not Agent.objects.filter(name="x").exists()
    response = run_api.post("/v0/memory/facts", {"text": "x", "tags": nested(950)})
    assert response.status_code == 400 and DEEP in error_of(response)["message"]
    assert not Fact.objects.exists()


def test_brackets_inside_strings_do_not_count(owner, thread):
    text = "[{" * 500
    response = owner.post(f"/api/v1/threads/{thread.id}/runs", {"input": {"text": text}})
    assert response.status_code == 201, response.content
    assert Run.objects.get(pk=response.json()["id"]).input == {"text": text}


def test_a_body_of_escaped_quotes_is_refused_at_once(owner):
    # Deep enough to be scanned, then one string never closed: a scan that looked for its
    # end again from every quote took 13 s for 64 KiB.
    body = b"[" * (MAX_DEPTH + 1) + b'"' + b'\\"' * 32_000
    started = time.monotonic()
    response = owner.generic("POST", "/api/v1/agents", body)
    assert time.monotonic() - started < 2
    assert response.status_code == 400
    assert not Agent.objects.exists()


def test_nesting_depth_reads_json_as_json():
    from memoryhub.parsers import nesting_depth

    assert nesting_depth(b"[]") == 1
    assert nesting_depth(b'{"a": ["[[[[", {"b": "\\"]]"}]}') == 3
    assert nesting_depth(b'["\\\\", [2]]') == 2  # an escaped backslash ends no string
    assert nesting_depth(json.dumps(nested(950)).encode()) == 950


# -- nesting: tool arguments -----------------------------------------------------------------


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100, 950])
def test_tool_arguments_nested_too_deep_are_refused(levels):
    with pytest.raises(ApiError) as text:
        parse_arguments(json.dumps(nested(levels)))  # as OpenAI sends them
    assert text.value.status == 422 and DEEP in text.value.message
    with pytest.raises(ApiError) as value:
        parse_arguments(nested(levels))  # as an SDK or MCP passes them
    assert value.value.status == 422
    assert value.value.message == RULE


def test_tool_arguments_nested_64_levels_are_taken():
    arguments = {"text": "x", "deep": nested(MAX_DEPTH - 1)}
    assert parse_arguments(json.dumps(arguments)) == arguments
    assert parse_arguments(arguments) == arguments


def _fact_tool_call(client, arguments: object) -> dict:
    tool_call = {"id": "c1", "function": {"name": "save_memory", "arguments": arguments}}
    response = client.post(
        "/v0/memory/tools/call", {"paths": ["users/{user}/"], "tool_call": tool_call}
    )
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100, 950])
def test_fact_tool_arguments_nested_too_deep_answer_an_error_text(run_api, levels):
    arguments = json.dumps({"text": "x", "tags": nested(levels - 1)})
    content = _fact_tool_call(run_api, arguments)["content"]
    assert content.startswith("error: invalid_argument: ") and DEEP in content
    assert not Fact.objects.exists() and not ToolCall.objects.exists()


def test_fact_tool_arguments_nested_64_levels_reach_the_tool(run_api):
    arguments = json.dumps({"text": "x", "tags": nested(MAX_DEPTH - 1)})
    content = _fact_tool_call(run_api, arguments)["content"]
    # The tool's own rule answers, not the parser's.
    assert content.startswith("error: invalid_argument: tags"), content
    assert DEEP not in content


def test_fact_tool_arguments_as_a_deep_object_make_the_body_too_deep(run_api):
    tool_call = {"id": "c1", "function": {"name": "save_memory", "arguments": nested(100)}}
    response = run_api.post(
        "/v0/memory/tools/call", {"paths": ["users/{user}/"], "tool_call": tool_call}
    )
    assert response.status_code == 400 and DEEP in error_of(response)["message"]
    assert not Fact.objects.exists() and not ToolCall.objects.exists()


@pytest.fixture
def file_run(owner, runner, agent) -> dict:
    """A running run with a writable file memory mounted as ``t``."""
    memory = owner.post("/api/v1/memories", {"name": "Team", "type": "postgres"}).json()
    mounts = [{"name": "t", "memory_id": memory["id"], "access": "write"}]
    thread = runner.post("/api/v1/threads", {"agent_id": agent.id, "memories": mounts}).json()
    run = runner.post(f"/api/v1/threads/{thread['id']}/runs", {"input": "hi"}).json()
    return {**run, "memory_id": memory["id"]}


def _runtime_tool_call(run: dict, arguments: object):
    # Encoded here: the test client would encode a 950-level body deep in its own stack.
    body = json.dumps({"id": "c1", "name": "memory_file_create", "arguments": arguments})
    return Api(run_token=run["token"]).generic(
        "POST", f"/api/v1/runs/{run['id']}/tool-calls", body.encode()
    )


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100, 950])
def test_runtime_tool_arguments_nested_too_deep_are_422(owner, file_run, levels):
    arguments = {"path": "a.md", "file_text": nested(levels - 1)}
    response = _runtime_tool_call(file_run, json.dumps(arguments))
    assert response.status_code == 422, response.content
    assert DEEP in error_of(response)["message"]
    assert not ToolCall.objects.exists()
    files = owner.get(f"/api/v1/memories/{file_run['memory_id']}/files/a.md")
    assert files.status_code == 404


def test_runtime_tool_arguments_nested_64_levels_reach_the_tool(file_run):
    arguments = {"path": "a.md", "file_text": nested(MAX_DEPTH - 1)}
    response = _runtime_tool_call(file_run, json.dumps(arguments))
    assert response.status_code == 200, response.content
    content = response.json()["content"]
    assert content.startswith("error: invalid_argument: ") and DEEP not in content


def test_runtime_tool_arguments_as_a_deep_object_make_the_body_too_deep(file_run):
    response = _runtime_tool_call(file_run, nested(950))
    assert response.status_code == 400 and DEEP in error_of(response)["message"]
    assert not ToolCall.objects.exists()


# -- nesting: the admin's JSON fields --------------------------------------------------------


@pytest.mark.parametrize("text", ["[" * 5000, "[" * 5000 + "]" * 5000, json.dumps(nested(100))])
def test_the_admin_refuses_deep_json_with_a_form_error(staff, agent, text):
    url = f"/admin/memoryhub/agent/{quote(agent.pk)}/change/"
    data = form_of(staff.get(url))
    before = Agent.objects.get(pk=agent.pk).toolset
    response = staff.post(url, {**data, "toolset": text})
    assert response.status_code == 200
    assert RULE in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).toolset == before
