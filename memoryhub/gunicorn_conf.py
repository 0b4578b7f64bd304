"""gunicorn's settings for memoryhub: ``gunicorn -c python:memoryhub.gunicorn_conf
memoryhub.wsgi`` (options given on the command line still win).

gunicorn answers some requests itself, before memoryhub sees them: a request line or
headers over its limits (414, 431), a malformed request (400), a crash outside the app
(500). It writes those as HTML; :class:`JsonErrorWorker` writes the same status as
memoryhub's JSON envelope instead, on every path (a request line too long for gunicorn
was not read far enough to know its path).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

worker_class = "memoryhub.gunicorn_conf.JsonErrorWorker"
# gunicorn's largest request line; a proxy in front (deploy/nginx.conf) refuses at 4 KiB.
limit_request_line = 8190
# Many headers, each within limit_request_field_size (8190 bytes), are not an error: the
# proxy in front bounds their total (16 KiB).
limit_request_fields = 32768

_STATUS_LINE = re.compile(rb"HTTP/1\.1 (\d{3}) ([^\r]*)\r\n")


class _Page:
    """The client's socket, keeping what gunicorn writes to it instead of sending it."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self.written = b""

    def sendall(self, data: bytes) -> None:
        self.written += data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class JsonErrorWorker(SyncWorker):
    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        # gunicorn's own handling (its log lines, the access log) with its page held back.
        page = _Page(client)
        super().handle_error(req, page, addr, exc)
        found = _STATUS_LINE.match(page.written)
        if found is None:
            return
        status, reason = int(found.group(1)), found.group(2).decode("latin-1")
        try:
            util.write_nonblock(client, _json_page(status, reason, exc))
        except Exception:  # noqa: BLE001 - the client is gone, as gunicorn's own page allows
            self.log.debug("Failed to send error message.")


def _json_page(status: int, reason: str, exc: BaseException) -> bytes:
    from memoryhub.errors import ApiError  # the app is loaded by now; not at config time

    message = "internal error" if status >= 500 else (str(exc) or "malformed request")
    body = json.dumps(ApiError(status, message).as_dict()).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body
