"""Streamable HTTP at ``/mcp``: the SDK's Starlette app, mounted by ``hub.asgi``, behind
:class:`SessionGate`.

MCP sessions live in the serving process's memory (the SDK's session manager), so every
request of one session must reach the same process: ``make run`` serves with one uvicorn
process, and several processes need the proxy to keep a session (``Mcp-Session-Id``) on one.

The SDK opens a session for any ``initialize`` and ends one on any ``DELETE`` that names it.
The gate lets a session be opened only with credentials that can act, binds it to them, and
caps how many one credential and one workspace (whose run key can mint run tokens) hold open,
so that no one can fill the process's sessions or end another client's (and with it the run
its API key opened).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

from django.conf import settings
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.mcp.server import (
    build_server,
    credentials_from_headers,
    http_session,
    in_thread,
    keep_api_key_sessions,
)
from hub.mcp.session import check_credentials, no_credentials
from memoryhub.conf import env, setting
from memoryhub.errors import ApiError, from_exception
from memoryhub.parsers import check_depth, too_large

PATH = "/mcp"
# An MCP session without a request this long ends, and with it the run an API key opened.
IDLE_SECONDS = env("MEMORYHUB_MCP_IDLE_SECONDS", 1800.0)
MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's own limit, kept


def _security() -> TransportSecuritySettings:
    """The SDK's Host and Origin checks (against DNS rebinding), with Django's hosts."""
    hosts = list(settings.ALLOWED_HOSTS)
    if any(h == "*" or h.startswith(".") for h in hosts):  # patterns the SDK can't match
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[host + port for host in hosts for port in ("", ":*")],
        allowed_origins=[f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
        + [f"{scheme}://{host}:*" for scheme in ("http", "https") for host in hosts],
    )


def mcp_app() -> ASGIApp:
    server = build_server(http_session)
    keep_api_key_sessions(server)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        session_idle_timeout=IDLE_SECONDS,
        transport_security=_security(),
        max_request_body_size=MAX_BODY_BYTES,
    )
    # The SDK's open sessions: a session leaves them however it ends (its client's DELETE,
    # the idle timeout, a crash), and no public API lists them.
    return SessionGate(app, lambda: server.session_manager._server_instances)  # noqa: SLF001


def sessions_per_credential() -> int:
    return int(setting("mcp.sessions_per_credential"))


def sessions_per_workspace() -> int:
    return int(setting("mcp.sessions_per_workspace"))


def no_session() -> ApiError:
    """Another's session answers as an unknown one: nobody learns which sessions exist."""
    return ApiError(
        404, "no MCP session of these credentials with this id: initialize a new session"
    )


def too_many_sessions(cap: int, holder: str = "these credentials") -> ApiError:
    return ApiError(
        429,
        f"{holder} hold at most {cap} open MCP sessions: end one (DELETE /mcp with "
        "its Mcp-Session-Id) or let one idle out before opening another",
    )


class Holder(NamedTuple):
    """Who holds a session: the credential that opened it (:attr:`Credentials.identity`)
    and the workspace it acts in."""

    identity: str
    workspace: str


class SessionGate:
    """An ASGI wrapper that reads each request's credentials before the SDK sees it.

    - A request without credentials is 401; one that would open a session (no
      ``Mcp-Session-Id``) needs credentials :func:`check_credentials` accepts (REST's
      401/403/422, an ended run's token 401 ``run_ended``) and room under
      :func:`sessions_per_credential` and :func:`sessions_per_workspace` (429).
    - A request naming a session must carry the credentials that opened it (404 otherwise,
      its DELETE included), compared by hash: :attr:`Credentials.identity`.
    - A body nested deeper than :data:`memoryhub.parsers.MAX_DEPTH` is 400 before the SDK
      parses it.

    The sessionless 2026-07-28 protocol opens no session: its requests only pass the body
    check, and each handler checks its credentials.
    """

    def __init__(self, app: ASGIApp, open_sessions: Callable[[], Collection[str]]) -> None:
        self.app = app
        self.open_sessions = open_sessions
        self.owners: dict[str, Holder] = {}  # session id -> who opened it
        self.opening: Counter[Holder] = Counter()  # who -> their initializes in flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        # As the SDK reads them: the first of a repeated header.
        headers = Headers(scope=scope)
        opening, holder = None, None
        try:
            if not _sessionless(headers):
                identity = credentials_from_headers(headers).identity
                if not identity:
                    raise no_credentials()
                session = headers.get(MCP_SESSION_ID_HEADER)
                if session is not None:
                    self._check_owner(session, identity)
                else:
                    opening = identity
            receive = await _checked_body(scope, receive)
            if opening is not None:
                holder = await self._admit(opening, headers)
        except Exception as exc:  # noqa: BLE001 - a refusal, or the database down (503)
            error = from_exception(exc)
            if error is None:
                raise
            await answer(send, error)
            return
        if holder is None:
            await self.app(scope, receive, send)
        else:
            await self._serve_opening(holder, scope, receive, send)

    def _check_owner(self, session: str, identity: str) -> None:
        owner = self.owners.get(session)
        if owner is not None and session not in self.open_sessions():
            del self.owners[session]  # it ended (its DELETE, its idle timeout)
            owner = None
        if owner is None or owner.identity != identity:
            raise no_session()

    def _held(self) -> list[Holder]:
        """Who holds each open session and each opening in flight (ended sessions forgotten)."""
        alive = self.open_sessions()
        self.owners = {sid: who for sid, who in self.owners.items() if sid in alive}
        return [*self.owners.values(), *self.opening.elements()]

    async def _admit(self, identity: str, headers: Mapping[str, str]) -> Holder:
        """Checked credentials with room for one more session, reserved for them."""
        workspace = await in_thread(check_credentials, credentials_from_headers(headers))
        held = self._held()  # no await from the count to the reservation
        per_credential, per_workspace = sessions_per_credential(), sessions_per_workspace()
        if sum(h.identity == identity for h in held) >= per_credential:
            raise too_many_sessions(per_credential)
        if sum(h.workspace == workspace for h in held) >= per_workspace:
            raise too_many_sessions(per_workspace, "the credentials of this workspace together")
        holder = Holder(identity, workspace)
        self.opening[holder] += 1
        return holder

    async def _serve_opening(
        self, holder: Holder, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The SDK opens the session; its id, in the answer's header, is bound to ``holder``."""
        pending = True

        def settle() -> None:
            nonlocal pending
            if pending:
                pending = False
                self.opening[holder] -= 1
                if not self.opening[holder]:
                    del self.opening[holder]

        async def bind(message: Message) -> None:
            if message["type"] == "http.response.start":
                session = _header(message, MCP_SESSION_ID_HEADER)
                if session and message["status"] < 400:
                    self.owners[session] = holder
                settle()  # the session, if one was opened, now counts as open
            await send(message)

        try:
            await self.app(scope, receive, bind)
        finally:
            settle()


async def _checked_body(scope: Scope, receive: Receive) -> Receive:
    """The request read again, after its body passed the depth check."""
    if scope["method"] != "POST":
        return receive
    body = await _read_body(receive, MAX_BODY_BYTES)
    check_depth(body)  # the REST parser's rule and refusal
    return _replay(body, receive)


def _sessionless(headers: Mapping[str, str]) -> bool:
    """A 2026-07-28 request, which the SDK serves on its own (as it routes them)."""
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _header(message: Message, name: str) -> str | None:
    wanted = name.encode("latin-1")
    for key, value in message.get("headers", ()):
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


async def _read_body(receive: Receive, limit: int) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)  # the client went away: the SDK sees an empty body
        body += message.get("body", b"")
        if len(body) > limit:
            raise too_large(limit)
        if not message.get("more_body", False):
            return bytes(body)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body already read given back first."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def answer(send: Send, error: ApiError) -> None:
    """memoryhub's error envelope, as the REST API answers the same refusal."""
    body = json.dumps(error.as_dict()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.lower().encode(), value.encode()) for name, value in error.headers.items()),
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
