"""What both local mem0 servers share: the reply type and a JSON request handler."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit


class Reply(Exception):
    """An answer: raised by a route to answer at once, or returned."""

    def __init__(self, status: int, body: Any, headers: dict | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


class JsonHandler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1 that answers at once; subclasses implement ``_serve(method)``."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # answer at once, as a real server does

    def log_message(self, *args: Any) -> None:
        pass

    def read_request(self) -> tuple[str, dict, bytes]:
        """(path, query with the last value of each parameter, raw body)."""
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()}, raw

    def send_reply(self, reply: Reply, payload: bytes | None = None) -> None:
        payload = json.dumps(reply.body, default=str).encode() if payload is None else payload
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _serve(self, method: str) -> None:
        raise NotImplementedError

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")
