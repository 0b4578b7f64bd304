"""Who may open, use and end an MCP session over HTTP, and what an untrusted request can make
the server do: raw HTTP requests against the live server, as an attacker would send them.

A session is opened only with credentials that could act (REST's 401/403/422 otherwise), and
answers only them: no credentials are 401, others 404 (as for an unknown session, so that
nobody learns which sessions exist). An ended run's token opens none (REST's 401
``run_ended``). Each credential holds at most ``mcp.sessions_per_credential`` open sessions,
and all credentials of a workspace together ``mcp.sessions_per_workspace`` (429 beyond).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import requests
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from facts.models import Fact
from memoryhub.embedded import free_port
from memoryhub.models import Run
from support.workers import stop, wait_until_up
from tests.mcp.conftest import (
    MARKS,
    TIMEOUT,
    _serve,
    headers_for,
    new_run,
    run_async,
    stdio_client,
    unique,
)

pytestmark = MARKS

SESSION = "mcp-session-id"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def post(url: str, message: dict, headers: dict, session: str = "") -> requests.Response:
    """One JSON-RPC message as an MCP client POSTs it (on a session when one is given)."""
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session:
        sent.update({SESSION: session, "mcp-protocol-version": LATEST_HANDSHAKE_VERSION})
    return requests.post(
        url, data=json.dumps(message), headers={**sent, **headers}, timeout=TIMEOUT
    )


def delete(url: str, headers: dict, session: str) -> requests.Response:
    sent = {SESSION: session, "mcp-protocol-version": LATEST_HANDSHAKE_VERSION, **headers}
    return requests.delete(url, headers=sent, timeout=TIMEOUT)


def answer(response: requests.Response) -> dict:
    """The JSON-RPC answer of a POST (an SSE event or a JSON body)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


def open_session(url: str, headers: dict) -> str:
    """The id of a session opened as a client does (initialize, then initialized)."""
    opened = post(url, INITIALIZE, headers)
    assert opened.status_code == 200, (opened.status_code, opened.text)
    session = opened.headers[SESSION]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(url, initialized, headers, session).status_code == 202
    return session


def tool_names(url: str, headers: dict, session: str) -> list[str]:
    listed = post(url, LIST_TOOLS, headers, session)
    assert listed.status_code == 200, (listed.status_code, listed.text)
    return [tool["name"] for tool in answer(listed)["result"]["tools"]]


def assert_refused(response: requests.Response, status: int, code: str, words: str) -> dict:
    """memoryhub's error envelope with this status, and no session opened by the request."""
    assert response.status_code == status, (response.status_code, response.text)
    error = response.json()["error"]
    assert error["code"] == code and words in error["message"], error
    assert SESSION not in response.headers
    return error


def key_config(space, person: str) -> dict[str, str]:
    """An API key client's headers: the key, the agent and the person (README)."""
    return headers_for(api_key=space.keys["run"], agent=space.agent_id, end_user=person)


def statuses(person: str) -> list[str]:
    return [run.status for run in Run.objects.filter(end_user__external_id=person)]


def eventually(check, seconds: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


# -- opening a session ----------------------------------------------------------------------
def test_initialize_needs_credentials_that_can_act(live):
    home, url = live.home, live.mcp_url
    nothing = post(url, INITIALIZE, {})
    error = assert_refused(nothing, 401, "unauthenticated", "a run token or an API key")
    assert nothing.headers["WWW-Authenticate"] == "Bearer"
    assert error == {"code": "unauthenticated", "message": error["message"]}

    bad_token = headers_for(run_token="rt_nope")  # noqa: S106 - not a token
    assert_refused(post(url, INITIALIZE, bad_token), 401, "unauthenticated", "invalid run token")
    bad_key = headers_for(api_key="mh_nope", agent=home.agent_id)
    assert_refused(post(url, INITIALIZE, bad_key), 401, "unauthenticated", "invalid or revoked")
    read_key = headers_for(api_key=home.keys["read"], agent=home.agent_id)
    assert_refused(post(url, INITIALIZE, read_key), 403, "forbidden", "run permission")
    no_agent = headers_for(api_key=home.keys["run"])
    assert_refused(post(url, INITIALIZE, no_agent), 422, "invalid_argument", "needs the agent")

    # Credentials that fit open one, and nothing was opened for the refused ones.
    person = unique("kim")
    session = open_session(url, key_config(home, person))
    assert "save_memory" in tool_names(url, key_config(home, person), session)
    assert statuses(person) == ["running"]


def test_an_ended_runs_token_opens_no_session(live):
    run = new_run(live, live.home, unique("ned"))
    live.call("POST", f"/api/v1/runs/{run['id']}/end", live.home.keys["run"])
    ended = headers_for(run_token=run["token"])
    refused = post(live.mcp_url, INITIALIZE, ended)
    error = assert_refused(refused, 401, "unauthenticated", "the run has ended")
    assert error["reason"] == "run_ended"
    # REST's answer to the same token acting.
    fact = {"path": "notes/", "text": "too late"}
    rest = live.rest("POST", "/v0/memory/facts", "", headers=ended, json=fact)
    assert (rest.status_code, rest.json()) == (401, refused.json())


# -- using and ending it --------------------------------------------------------------------
def test_a_session_answers_only_the_credentials_that_opened_it(live):
    url, alice, mallory = live.mcp_url, unique("alice"), unique("mallory")
    session = open_session(url, key_config(live.home, alice))

    # Another workspace's key, and another key of the same workspace: as if no such session.
    for other in (
        key_config(live.other, mallory),
        key_config(live.home, mallory) | {"Authorization": f"Bearer {live.home.keys['write']}"},
    ):
        refused = post(url, LIST_TOOLS, other, session)
        assert_refused(refused, 404, "not_found", "no MCP session")
    stolen = post(url, LIST_TOOLS, headers_for(run_token=live.other.run["token"]), session)
    assert_refused(stolen, 404, "not_found", "no MCP session")
    assert_refused(post(url, LIST_TOOLS, {}, session), 401, "unauthenticated", "run token")

    assert statuses(mallory) == []  # no run was opened for the others on alice's session
    assert "save_memory" in tool_names(url, key_config(live.home, alice), session)
    assert statuses(alice) == ["running"]


def test_nobody_else_can_end_a_session(live):
    url, person = live.mcp_url, unique("nora")
    mine = key_config(live.home, person)
    session = open_session(url, mine)
    tool_names(url, mine, session)  # the session's run is opened by its first request
    assert statuses(person) == ["running"]

    assert_refused(delete(url, {}, session), 401, "unauthenticated", "run token")
    other = key_config(live.other, unique("oscar"))
    assert_refused(delete(url, other, session), 404, "not_found", "no MCP session")

    # The session still answers (an ended one is 404 at once), so its run was not ended.
    assert "save_memory" in tool_names(url, mine, session)
    assert statuses(person) == ["running"]
    assert delete(url, mine, session).status_code == 200  # its own client ends it
    assert eventually(lambda: statuses(person) == ["ended"])
    assert_refused(post(url, LIST_TOOLS, mine, session), 404, "not_found", "no MCP session")


# -- how many -------------------------------------------------------------------------------
CAP = 2
IDLE_SECONDS = 8


@pytest.fixture(scope="module")
def capped_url(live) -> Iterator[str]:
    """A server on the same database that keeps two sessions a credential, idle after 8 s."""
    port = free_port()
    server = _serve(
        port,
        MEMORYHUB_MCP_SESSIONS_PER_CREDENTIAL=str(CAP),
        MEMORYHUB_MCP_IDLE_SECONDS=str(IDLE_SECONDS),
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(server)


def test_open_sessions_are_capped_per_credential(live, capped_url):
    url = capped_url
    first = headers_for(run_token=new_run(live, live.home, unique("pia"))["token"])
    second = headers_for(run_token=new_run(live, live.home, unique("quin"))["token"])

    sessions = [open_session(url, first) for _ in range(CAP)]
    error = assert_refused(post(url, INITIALIZE, first), 429, "rate_limited", f"at most {CAP}")
    assert "DELETE" in error["message"]
    # Anyone else still opens one, and the first credential's sessions still work.
    assert "save_memory" in tool_names(url, second, open_session(url, second))
    assert "save_memory" in tool_names(url, first, sessions[0])

    # A session that ends leaves room: its client's DELETE, or its idle timeout.
    assert delete(url, first, sessions[0]).status_code == 200
    open_session(url, first)
    assert_refused(post(url, INITIALIZE, first), 429, "rate_limited", f"at most {CAP}")
    assert eventually(
        lambda: post(url, INITIALIZE, first).status_code == 200, IDLE_SECONDS + TIMEOUT
    )


WORKSPACE_CAP = 3


@pytest.fixture(scope="module")
def workspace_capped_url(live) -> Iterator[str]:
    """A server on the same database that keeps three sessions a workspace."""
    port = free_port()
    server = _serve(port, MEMORYHUB_MCP_SESSIONS_PER_WORKSPACE=str(WORKSPACE_CAP))
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(server)


def test_open_sessions_are_capped_per_workspace(live, workspace_capped_url):
    """A run key mints run tokens at will: each fresh token is far under its own cap, and
    all of them, and the workspace's API keys, share the workspace's."""
    url = workspace_capped_url
    minted = [
        headers_for(run_token=new_run(live, live.home, None)["token"])
        for _ in range(WORKSPACE_CAP + 1)
    ]
    sessions = [open_session(url, headers) for headers in minted[:WORKSPACE_CAP]]
    cap = f"at most {WORKSPACE_CAP}"
    error = assert_refused(post(url, INITIALIZE, minted[-1]), 429, "rate_limited", cap)
    assert "workspace" in error["message"] and "DELETE" in error["message"]
    key_client = key_config(live.home, person := unique("uma"))
    assert_refused(post(url, INITIALIZE, key_client), 429, "rate_limited", cap)
    assert statuses(person) == []  # no run was opened for the refused key

    # Another workspace still opens one, and the workspace's sessions still work.
    other = key_config(live.other, unique("vic"))
    assert "save_memory" in tool_names(url, other, open_session(url, other))
    assert "save_memory" in tool_names(url, minted[0], sessions[0])

    # A session that ends leaves room for any credential of the workspace.
    assert delete(url, minted[0], sessions[0]).status_code == 200
    assert "save_memory" in tool_names(url, minted[-1], open_session(url, minted[-1]))
    assert_refused(post(url, INITIALIZE, minted[0]), 429, "rate_limited", cap)


# -- untrusted bodies and URIs --------------------------------------------------------------
def test_a_body_nested_too_deep_is_refused_before_it_is_parsed(live):
    url, person = live.mcp_url, unique("rex")
    mine = key_config(live.home, person)
    deep_initialize = {**INITIALIZE, "params": {**INITIALIZE["params"], "x": nested(100)}}
    assert_refused(post(url, deep_initialize, mine), 400, "bad_request", "nested more than 64")

    session = open_session(url, mine)
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "save_memory", "arguments": {"text": "x", "deep": nested(70)}},
    }
    assert_refused(post(url, call, mine, session), 400, "bad_request", "nested more than 64")
    assert "save_memory" in tool_names(url, mine, session)  # the session is still fine


def test_tool_arguments_nested_too_deep_are_a_tool_error(live):
    """Over stdio (no HTTP body to refuse) the tool's own rule answers, as over REST."""
    run = new_run(live, live.home, person := unique("sid"))

    async def body():
        async with stdio_client("--run-token", run["token"]) as client:
            return await client.call_tool("save_memory", {"text": "x", "deep": nested(70)})

    saved = run_async(body)
    assert saved.is_error and "at most 64 levels deep" in saved.content[0].text
    assert not Fact.objects.filter(path=f"users/{person}/").exists()


def test_a_file_uri_with_a_nul_is_refused_by_the_path_rules(live, connect):
    async def body():
        async with connect(run_token=live.home.run["token"]) as client:
            with pytest.raises(MCPError) as nul:
                await client.read_resource("memoryhub://files/prefs/prefs%00language.md")
            with pytest.raises(MCPError) as dots:
                await client.read_resource("memoryhub://files/prefs/prefs/../language.md")
            return str(nul.value), str(dots.value)

    nul, dots = run_async(body)
    assert "invalid_argument: path may not contain NUL or other control characters" in nul
    assert "'..' segments" in dots


def test_the_context_of_a_run_whose_person_was_erased_is_empty(live, connect):
    """As ``GET /api/v1/runs/current`` answers it: erasing the person cleared what the run got."""
    person = unique("tess")
    run = new_run(live, live.home, person)
    assert run["context"]
    live.call("DELETE", f"/api/v1/end-users/{person}", live.home.keys["write"])
    own = live.call(
        "GET", "/api/v1/runs/current", "", headers={"x-agentos-run-token": run["token"]}
    )

    async def body():
        async with connect(run_token=run["token"]) as client:
            return await client.read_resource("memoryhub://run/context")

    read = run_async(body)
    assert own["context"] == ""
    assert [c.text for c in read.contents] == [""]
