"""The client against a live memoryhub on a real socket (pytest-django's ``live_server``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from memoryhub.client import Invocation, MemoryHub
from memoryhub.services.workspaces import create_api_key, create_workspace

# Requests a proxy sends on without these (it sets its own framing).
HOP_HEADERS = {"host", "connection", "content-length", "accept-encoding"}


@pytest.fixture
def api_key(transactional_db) -> str:
    return create_api_key(create_workspace("Client"), "write")[1]


@pytest.fixture
def hub(live_server, api_key) -> Iterator[MemoryHub]:
    client = MemoryHub(live_server.url, api_key, backoff=0)
    yield client
    client.close()  # a kept-alive connection would hold a server thread and its database


@pytest.fixture
def start_run(hub) -> Iterator[Callable[..., Invocation]]:
    """A new agent's run on a new thread, for ``end_user`` (or none)."""
    started: list[Invocation] = []

    def start(
        input: Any = None, *, end_user: str | None = "alice", memories: list | None = None
    ) -> Invocation:
        agent = hub.create_agent("Support bot")
        thread = hub.create_thread(agent["id"], end_user=end_user, memories=memories)
        started.append(hub.accept_run(thread["id"], input=input))
        return started[-1]

    yield start
    for inv in started:
        inv.close()


class FlakyProxy:
    """Sends requests on to memoryhub; ``failures`` says what to do to the next answers:
    ``"drop"`` lets memoryhub answer, then closes the connection without passing the answer
    on (the work was done, the client saw nothing); ``503`` answers 503 without asking."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.failures: list[str | int] = []
        self.seen: list[tuple[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = False  # close() waits for requests still being forwarded
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self, method: str, path: str) -> int:
        return sum(1 for seen in self.seen if seen == (method, path))

    def close(self) -> None:
        """Stop serving and wait for the requests in flight: a test's database is emptied
        after it, and a request still running then would deadlock with that."""
        self.server.shutdown()
        self.server.server_close()


def _handler(proxy: FlakyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            proxy.seen.append((self.command, self.path.split("?")[0]))
            failure = proxy.failures.pop(0) if proxy.failures else None
            if failure == "slow":
                time.sleep(0.5)
            if failure == 503:
                return self.answer(503, b'{"error": {"code": "unavailable", "message": "busy"}}')
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
            answer = requests.request(
                self.command, proxy.target + self.path, data=body, headers=headers, timeout=30
            )
            if failure == "drop":
                self.close_connection = True  # memoryhub did the work; the client sees nothing
                return None
            return self.answer(answer.status_code, answer.content)

        def answer(self, status: int, content: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            # One request per connection: close() then never waits on an idle keep-alive.
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_DELETE = forward

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def proxy(live_server) -> Iterator[FlakyProxy]:
    flaky = FlakyProxy(live_server.url)
    thread = threading.Thread(target=flaky.server.serve_forever, daemon=True)
    thread.start()
    yield flaky
    flaky.close()


def scripted_chat(*turns: Callable[[list, list], dict]) -> Callable[..., dict]:
    """An OpenAI-compatible chat function: each turn makes the assistant message from the
    messages and tools it is given, answered in the chat completions shape."""
    remaining = list(turns)

    def chat(messages: list, tools: list | None = None) -> dict:
        message = remaining.pop(0)(messages, tools or [])
        return {"choices": [{"index": 0, "message": {"role": "assistant", **message}}]}

    return chat


def tool_call(call_id: str, name: str, arguments: str) -> dict:
    """A model's tool call, exactly as OpenAI's chat completions answer it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
