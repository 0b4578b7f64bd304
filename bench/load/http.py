"""One simulated runtime's HTTP: its own keep-alive connection to each web server, used in
turn, so that consecutive calls of one run land on different processes."""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit


@dataclass
class Answer:
    status: int
    body: dict
    etag: str | None
    seconds: float


class Http:
    def __init__(self, bases: list[str], timeout: float = 60) -> None:
        self.hosts = [(urlsplit(b).hostname or "127.0.0.1", urlsplit(b).port or 80) for b in bases]
        self.connections: list[http.client.HTTPConnection | None] = [None] * len(bases)
        self.turn = 0
        self.timeout = timeout

    def request(
        self, method: str, path: str, body: object = None, headers: dict | None = None
    ) -> Answer:
        """The answer of the next server in turn (the path is quoted here)."""
        index = self.turn % len(self.hosts)
        self.turn += 1
        sent = {"Content-Type": "application/json", **(headers or {})}
        payload = None if body is None else json.dumps(body)
        started = time.perf_counter()
        connection = self._connection(index)
        try:
            connection.request(method, quote(path, safe="/?=&-_.~:"), payload, sent)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self._close(index)
            raise
        seconds = time.perf_counter() - started
        if response.will_close:
            self._close(index)
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:  # not the API's JSON (a proxy's page): kept for the report
            parsed = {"raw": data[:300].decode("latin-1")}
        return Answer(response.status, parsed, response.getheader("ETag"), seconds)

    def _connection(self, index: int) -> http.client.HTTPConnection:
        if self.connections[index] is None:
            host, port = self.hosts[index]
            self.connections[index] = http.client.HTTPConnection(host, port, timeout=self.timeout)
        return self.connections[index]

    def _close(self, index: int) -> None:
        if self.connections[index] is not None:
            self.connections[index].close()
            self.connections[index] = None

    def close(self) -> None:
        for index in range(len(self.connections)):
            self._close(index)
