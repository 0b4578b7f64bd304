"""Two faithful local mem0 servers over a real socket, with switches for failures.

:class:`PlatformServer` speaks the hosted Platform's API and :class:`OssServer` the
self-hosted REST server's, as described in ``mem0-api.md``: their paths (the Platform's
end with a slash, the self-hosted ones do not), auth headers, bodies, status codes and
quirks (the Platform's de-duplication of exact repeats with ``infer=false`` and its 404 for
a page past the end; the self-hosted server's ``200 null`` for an unknown id, its listing
capped at 1000 without paging, admin-only purges and ``502`` for backend failures).

Switches, settable at any time from a test:

- ``delay``: seconds to wait before handling each request (a slow backend), or only the
  requests matching ``delay_when(method, path)`` when that is set;
- ``refuse()`` / ``resume()``: close the listening socket (connections are refused), then
  listen again on the same port;
- ``fail(status, times=None, when=None)``: answer ``status`` (with the API's error body)
  ``times`` times (None: always) for requests matching ``when(method, path)``;
- ``drop_after_write``: do the write, then close the connection without answering;
- ``drop``: close every connection without answering (reads too);
- ``malformed``: answer 200 with a body that is not JSON;
- ``redirect_to``: answer 302 to this address;
- ``refuse_auth``: answer 401 to everything.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from support.fakes.http import JsonHandler, Reply

PLATFORM_TZ = timezone(timedelta(hours=-7))  # the Platform answers in US Pacific time


def is_purge(method: str, path: str) -> bool:
    """A request that deletes a whole namespace: the Platform's or the self-hosted purge."""
    return method == "DELETE" and path in ("/v1/memories/", "/memories")


def _words(text: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w}


def score(query: str, text: str) -> float:
    """Word overlap of the query with a text, 0..1: a stand-in for vector similarity."""
    wanted = _words(query)
    return round(len(wanted & _words(text)) / len(wanted), 4) if wanted else 0.0


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A caller that timed out hangs up before a delayed answer: expected, not an error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeMem0Server:
    """Shared machinery: the socket, the store, the switches and the request log."""

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}  # id -> stored record
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.clock = 0  # makes created_at strictly increasing
        self.delay = 0.0
        self.delay_when: Callable[[str, str], bool] | None = None
        self.drop_after_write = False
        self.drop = False
        self.malformed = False
        self.redirect_to: str | None = None
        self.refuse_auth = False
        self._failures: list[list] = []  # [status, times left or None, predicate]
        self.httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- lifecycle ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeMem0Server:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def refuse(self) -> None:
        """Stops listening: a connection is refused, as by a server that is down."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def resume(self) -> None:
        """Listens again on the same address after :meth:`refuse`."""
        self.httpd = _QuietServer(self.httpd.server_address[:2], self._handler_class())
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    # --- switches ----------------------------------------------------------------------

    def fail(
        self,
        status: int,
        times: int | None = None,
        when: Callable[[str, str], bool] | None = None,
    ) -> None:
        self._failures.append([status, times, when or (lambda method, path: True)])

    def reset_switches(self) -> None:
        self.delay, self.drop_after_write, self.drop = 0.0, False, False
        self.delay_when = None
        self.malformed, self.redirect_to, self.refuse_auth = False, None, False
        self._failures.clear()

    def _failure_for(self, method: str, path: str) -> int | None:
        with self.lock:
            for failure in self._failures:
                status, times, when = failure
                if (times is None or times > 0) and when(method, path):
                    if times is not None:
                        failure[1] = times - 1
                    return status
        return None

    # --- the store ---------------------------------------------------------------------

    def new_record(self, text: str, user_id: str, metadata: Any) -> dict:
        with self.lock:
            self.clock += 1
            now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=self.clock)
            record = {
                "id": str(uuid.uuid4()),
                "memory": text,
                "hash": hashlib.md5(text.encode()).hexdigest(),  # noqa: S324 - as mem0
                "metadata": metadata if isinstance(metadata, dict) else None,
                "user_id": user_id,
                "created_at": now,
                "updated_at": now,
            }
            self.records[record["id"]] = record
        return record

    def in_namespace(self, user_id: str) -> list[dict]:
        return sorted(
            (r for r in self.records.values() if r["user_id"] == user_id),
            key=lambda r: r["created_at"],
            reverse=True,
        )

    def ranked(self, user_id: str, query: str, top_k: int, threshold: float) -> list[dict]:
        scored = [(score(query, r["memory"]), r) for r in self.in_namespace(user_id)]
        scored = [(s, r) for s, r in scored if s >= threshold]
        scored.sort(key=lambda pair: -pair[0])
        return [{**self.item(r), "score": s} for s, r in scored[:top_k]]

    def item(self, record: dict) -> dict:
        raise NotImplementedError

    # --- HTTP --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict, headers: Any, body: Any) -> Any:
        raise NotImplementedError

    def is_write(self, method: str, path: str) -> bool:
        return (
            method in ("POST", "PUT", "DELETE")
            and "search" not in path
            and not (
                method == "POST"
                and path.startswith("/v3/memories/")
                and path != "/v3/memories/add/"
            )
        )

    def error_reply(self, status: int) -> Reply:
        return Reply(status, {"detail": f"error {status}"})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def _serve(self, method: str) -> None:
                path, query, raw = self.read_request()
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                server.requests.append(
                    {
                        "method": method,
                        "path": path,
                        "query": query,
                        "headers": dict(self.headers),
                        "body": body,
                    }
                )
                delay, when = server.delay, server.delay_when
                if delay and (when is None or when(method, path)):
                    server.stopping.wait(delay)
                if server.drop:
                    self._hang_up()
                    return
                try:
                    reply = server._dispatch(method, path, query, self.headers, body)
                except Reply as answered:
                    reply = answered
                if server.drop_after_write and server.is_write(method, path):
                    self._hang_up()
                    return
                garbled = server.malformed and reply.status < 300
                self.send_reply(reply, b"<html>upstream says hello</html>" if garbled else None)

            def _hang_up(self) -> None:
                self.close_connection = True
                self.connection.shutdown(2)

        return Handler

    def _dispatch(self, method: str, path: str, query: dict, headers: Any, body: Any) -> Reply:
        if self.redirect_to:
            return Reply(302, {}, {"Location": self.redirect_to})
        if self.refuse_auth:
            raise Reply(401, {"detail": "Invalid API key"})
        status = self._failure_for(method, path)
        if status is not None:
            raise self.error_reply(status)
        return self.handle(method, path, query, headers, body)


def _valid_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class PlatformServer(FakeMem0Server):
    """The hosted mem0 Platform (api.mem0.ai)."""

    def __init__(self, api_key: str = "m0-test-key") -> None:
        super().__init__()
        self.api_key = api_key

    def item(self, record: dict) -> dict:
        def pacific(moment: datetime) -> str:
            return moment.astimezone(PLATFORM_TZ).isoformat()

        return {
            "id": record["id"],
            "memory": record["memory"],
            "user_id": record["user_id"],
            "metadata": record["metadata"],
            "categories": [],
            "created_at": pacific(record["created_at"]),
            "updated_at": pacific(record["updated_at"]),
            "expiration_date": None,
            "structured_attributes": {},
        }

    def error_reply(self, status: int) -> Reply:
        if status == 429:
            return Reply(429, {"detail": "Request was throttled."}, {"Retry-After": "30"})
        return Reply(status, {"error": "Internal server error"})

    def handle(self, method: str, path: str, query: dict, headers: Any, body: Any) -> Reply:
        if headers.get("Authorization") != f"Token {self.api_key}":
            raise Reply(401, {"detail": "Invalid API key"})
        if not path.endswith("/"):
            raise Reply(404, {"detail": "Not found."})
        route = (method, path)
        if route == ("GET", "/v1/ping/"):
            return Reply(200, {"status": "ok", "org_id": "org", "project_id": "prj"})
        if route == ("POST", "/v3/memories/add/"):
            return self.add(body or {})
        if route == ("POST", "/v3/memories/search/"):
            return self.search(body or {})
        if route == ("POST", "/v3/memories/"):
            return self.list(query, body or {})
        if route == ("DELETE", "/v1/memories/"):
            return self.delete_all(query)
        if path.startswith("/v1/memories/") and path.count("/") == 4:
            return self.one(method, path.split("/")[3], body or {})
        raise Reply(404, {"detail": "Not found."})

    def add(self, body: dict) -> Reply:
        user_id = body.get("user_id")
        if not any(body.get(k) for k in ("user_id", "agent_id", "run_id", "app_id")):
            raise Reply(400, {"error": "One of the filters: app_id, user_id, agent_id, run_id"})
        messages = body.get("messages") or []
        texts = [m.get("content", "") for m in messages if m.get("role") != "system"]
        event_id = str(uuid.uuid4())
        if body.get("infer", True):
            for text in texts:
                self.new_record(text, user_id, body.get("metadata"))
            return Reply(200, {"event_id": event_id, "status": "PENDING"})
        results = []
        for text in texts:
            digest = hashlib.md5(text.encode()).hexdigest()  # noqa: S324 - as mem0
            if any(r["hash"] == digest for r in self.in_namespace(user_id)):
                continue  # exact repeats in a scope are de-duplicated
            record = self.new_record(text, user_id, body.get("metadata"))
            results.append({"id": record["id"], "data": {"memory": text}, "event": "ADD"})
        return Reply(
            200,
            {"message": "ok", "status": "SUCCEEDED", "event_id": event_id, "results": results},
        )

    def search(self, body: dict) -> Reply:
        if "user_id" in body:
            raise Reply(400, {"error": "Top-level entity parameters are not supported."})
        filters = body.get("filters")
        if not isinstance(filters, dict) or not filters:
            raise Reply(400, {"error": "filters are required"})
        top_k = body.get("top_k", 10)
        if not isinstance(top_k, int) or not 1 <= top_k <= 1000:
            raise Reply(400, {"top_k": ["Ensure this value is between 1 and 1000."]})
        threshold = body.get("threshold", 0.1)
        results = self.ranked(filters.get("user_id"), body.get("query", ""), top_k, threshold)
        return Reply(200, {"results": results})

    def list(self, query: dict, body: dict) -> Reply:
        filters = body.get("filters")
        if not isinstance(filters, dict) or not filters:
            raise Reply(400, {"error": "filters are required"})
        page, size = int(query.get("page", 1)), int(query.get("page_size", 100))
        if not 1 <= size <= 200:
            raise Reply(400, {"page_size": ["page_size must be between 1 and 200"]})
        records = self.in_namespace(filters.get("user_id"))
        pages = max(1, -(-len(records) // size))
        if page < 1 or page > pages:
            raise Reply(404, {"detail": "Invalid page."})
        chunk = records[(page - 1) * size : page * size]
        return Reply(
            200,
            {
                "count": len(records),
                "next": f"?page={page + 1}" if page < pages else None,
                "previous": f"?page={page - 1}" if page > 1 else None,
                "results": [self.item(r) for r in chunk],
            },
        )

    def delete_all(self, query: dict) -> Reply:
        user_id = query.get("user_id")
        if not user_id:
            raise Reply(400, {"error": "At least one filter is required"})
        for record in self.in_namespace(user_id):
            self.records.pop(record["id"], None)
        return Reply(200, {"message": "Delete in progress...", "event_id": str(uuid.uuid4())})

    def one(self, method: str, memory_id: str, body: dict) -> Reply:
        if not _valid_uuid(memory_id):
            raise Reply(400, {"error": "memory_id should be a valid UUID"})
        record = self.records.get(memory_id)
        if record is None:
            raise Reply(404, {"error": "Memory not found!"})
        if method == "GET":
            return Reply(200, self.item(record))
        if method == "DELETE":
            self.records.pop(memory_id, None)
            return Reply(200, {"message": "Memory deleted successfully!"})
        if method == "PUT":
            if "text" in body:
                record["memory"] = body["text"]
                record["hash"] = hashlib.md5(body["text"].encode()).hexdigest()  # noqa: S324
            if "metadata" in body:
                record["metadata"] = body["metadata"]
            record["updated_at"] = datetime.now(UTC)
            return Reply(200, self.item(record))
        raise Reply(405, {"detail": f'Method "{method}" not allowed.'})


class OssServer(FakeMem0Server):
    """The self-hosted mem0 REST server (server/main.py)."""

    ALL_MEMORIES_LIMIT = 1000

    def __init__(self, api_key: str | None = None, admin_key: str | None = None) -> None:
        super().__init__()
        self.api_key, self.admin_key = api_key, admin_key

    def item(self, record: dict) -> dict:
        return {
            "id": record["id"],
            "memory": record["memory"],
            "hash": record["hash"],
            "metadata": record["metadata"],
            "created_at": record["created_at"].astimezone(PLATFORM_TZ).isoformat(),
            "updated_at": record["updated_at"].astimezone(PLATFORM_TZ).isoformat(),
            "user_id": record["user_id"],
            "agent_id": None,
            "run_id": None,
            "role": "user",
        }

    def error_reply(self, status: int) -> Reply:
        request_id = str(uuid.uuid4())
        body = {
            "detail": "Vector store failure",
            "code": "provider_error",
            "request_id": request_id,
        }
        return Reply(status, body, {"X-Request-ID": request_id})

    def _auth(self, headers: Any, admin_only: bool) -> None:
        if self.api_key is None and self.admin_key is None:
            return  # AUTH_DISABLED
        given = headers.get("X-API-Key")
        if given is not None and given == self.admin_key:
            return
        if given is None or given != self.api_key:
            raise Reply(401, {"detail": "Invalid or missing API key"})
        if admin_only:
            raise Reply(403, {"detail": "Admin API key required"})

    def handle(self, method: str, path: str, query: dict, headers: Any, body: Any) -> Reply:
        body = body or {}
        if path == "/memories" and method == "POST":
            self._auth(headers, admin_only=False)
            return self.add(body)
        if path == "/memories" and method == "GET":
            self._auth(headers, admin_only="user_id" not in query)
            return self.list(query)
        if path == "/memories" and method == "DELETE":
            self._auth(headers, admin_only=True)
            return self.delete_all(query)
        if path == "/search" and method == "POST":
            self._auth(headers, admin_only=False)
            return self.search(body)
        if path.startswith("/memories/") and path.count("/") == 2 and path != "/memories/":
            self._auth(headers, admin_only=False)
            return self.one(method, path.split("/")[2], body)
        raise Reply(404, {"detail": "Not Found"})

    def add(self, body: dict) -> Reply:
        if not any(body.get(k) for k in ("user_id", "agent_id", "run_id")):
            raise Reply(400, {"detail": "At least one identifier is required."})
        results = []
        for message in body.get("messages") or []:
            if message.get("role") == "system":
                continue
            # infer=False: each message verbatim, no de-duplication.
            record = self.new_record(
                message.get("content", ""), body["user_id"], body.get("metadata")
            )
            results.append({"id": record["id"], "memory": record["memory"], "event": "ADD"})
        return Reply(200, {"results": results})

    def list(self, query: dict) -> Reply:
        top_k = int(query.get("top_k", 20))  # Memory.get_all's default limit
        if not 0 <= top_k <= self.ALL_MEMORIES_LIMIT:
            raise Reply(422, {"detail": "top_k must be between 0 and 1000"})
        records = self.in_namespace(query.get("user_id"))[:top_k]
        return Reply(200, {"results": [self.item(r) for r in records]})

    def search(self, body: dict) -> Reply:
        filters = body.get("filters") or {}
        top_k = body.get("top_k", 20)
        threshold = body.get("threshold", 0.1)
        results = self.ranked(filters.get("user_id"), body.get("query", ""), top_k, threshold)
        return Reply(200, {"results": results})

    def delete_all(self, query: dict) -> Reply:
        if not query.get("user_id"):
            raise Reply(400, {"detail": "At least one identifier is required."})
        for record in self.in_namespace(query["user_id"]):
            self.records.pop(record["id"], None)
        return Reply(200, {"message": "All relevant memories deleted"})

    def one(self, method: str, memory_id: str, body: dict) -> Reply:
        record = self.records.get(memory_id)
        if method == "GET":
            return Reply(200, self.item(record) if record else None)
        if record is None:
            raise Reply(404, {"detail": "Memory not found"})
        if method == "PUT":
            if "text" in body:
                record["memory"] = body["text"]
                record["hash"] = hashlib.md5(body["text"].encode()).hexdigest()  # noqa: S324
            if "metadata" in body:
                # mem0's Memory.update merges the given metadata into the record's.
                record["metadata"] = {**(record["metadata"] or {}), **body["metadata"]}
            record["updated_at"] = datetime.now(UTC)
            return Reply(200, {"message": "Memory updated successfully!"})
        if method == "DELETE":
            self.records.pop(memory_id, None)
            return Reply(200, {"message": "Memory deleted successfully!"})
        raise Reply(405, {"detail": "Method Not Allowed"})
