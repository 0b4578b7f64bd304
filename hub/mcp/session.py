"""Which run an MCP session acts as, decided by its credentials alone.

A run token (``x-agentos-run-token``) is that run. An API key with ``run``, with the agent and
end user the client's configuration names, opens a thread and a run for the session (through
the same services as ``POST /api/v1/threads`` and ``.../runs``), and ends the run with the
session. Every call then acts as that run, so each tool and refusal is the REST one.

Everything here is synchronous Django code; the server calls it in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import close_old_connections

from facts.context import given_paths
from memoryhub.auth import principal_for_api_key, principal_for_run_token
from memoryhub.errors import ApiError
from memoryhub.ids import hash_secret
from memoryhub.models import Permission, Run
from memoryhub.principals import Principal
from memoryhub.services.end_users import END_USER
from threads.services.runs import accept_run, end_run
from threads.services.threads import create_thread

USER_FOLDER = "users/{user}/"
NO_CREDENTIALS = "a run token or an API key is required"
T = TypeVar("T")


@dataclass(frozen=True)
class Credentials:
    """What the client's configuration gives (headers, or the stdio command's options)."""

    run_token: str = ""
    api_key: str = ""
    agent: str = ""  # the agent's id, with an API key
    end_user: str = ""  # the runtime's id for the person, with an API key
    paths: tuple[str, ...] = ()  # the folders the facts tools reach; default below

    @property
    def key_hash(self) -> str:
        return hash_secret(self.api_key) if self.api_key else ""

    @property
    def identity(self) -> str:
        """The credential that acts (a run token before an API key, as in :func:`open_session`),
        hashed: what an MCP session over HTTP is bound to. "" without one."""
        if self.run_token:
            return "run:" + hash_secret(self.run_token)
        return "key:" + self.key_hash if self.api_key else ""


@dataclass
class McpSession:
    """One MCP session's run: its token (re-read on every call, so an ended run is seen)."""

    run_token: str
    paths: list[str]
    opened_by: str = ""  # the hash of the API key that opened the run; "" for a run token
    ended: bool = field(default=False)

    def principal(self) -> Principal:
        return principal_for_run_token(self.run_token)


def run_of(principal: Principal) -> Run:
    """The run of a run token's principal (``McpSession.principal``), which always has one."""
    assert principal.run is not None
    return principal.run


def in_worker(function: Callable[..., T]) -> Callable[..., T]:
    """Run Django code in a worker thread that reuses no connection past its lifetime."""

    def wrapped(*args: Any, **kwargs: Any) -> T:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return wrapped


def _paths(credentials: Credentials, has_person: bool) -> list[str]:
    if credentials.paths:
        return given_paths(list(credentials.paths), "paths")
    # The person's own folder when the run has one; else the whole memory, as REST.
    return [USER_FOLDER] if has_person else given_paths(None)


def no_credentials() -> ApiError:
    return ApiError(401, NO_CREDENTIALS, headers={"WWW-Authenticate": "Bearer"})


@dataclass(frozen=True)
class _KeySession:
    """What an API key's session is opened with, checked."""

    key: Principal
    end_user: str | None
    paths: list[str]


def _key_session(credentials: Credentials) -> _KeySession:
    if not credentials.api_key:
        raise no_credentials()
    if not credentials.agent:
        raise ApiError(422, "an API key needs the agent named in the configuration")
    key = principal_for_api_key(credentials.api_key)
    end_user = END_USER(credentials.end_user) if credentials.end_user else None
    return _KeySession(key, end_user, _paths(credentials, end_user is not None))


def _run_token_session(credentials: Credentials) -> McpSession:
    run = run_of(principal_for_run_token(credentials.run_token))
    return McpSession(credentials.run_token, _paths(credentials, bool(run.end_user_id)))


def check_credentials(credentials: Credentials) -> str:
    """The id of the workspace these credentials act in, or the refusal of those that can't
    act (401/403/422), opening nothing: over HTTP an MCP session is opened only for
    credentials that can act. An ended run's token is REST's 401 ``run_ended``."""
    if credentials.run_token:
        principal = principal_for_run_token(credentials.run_token)
        principal.require(Permission.RUN)
        _paths(credentials, bool(run_of(principal).end_user_id))
        return principal.workspace_id
    key = _key_session(credentials).key
    key.require(Permission.RUN)
    return key.workspace_id


def open_session(credentials: Credentials) -> McpSession:
    """The session of these credentials (401/403/422 as ``ApiError`` when they don't fit)."""
    if credentials.run_token:
        return _run_token_session(credentials)
    checked = _key_session(credentials)  # before anything is opened
    key, paths = checked.key, checked.paths
    thread = create_thread(key, credentials.agent, end_user=checked.end_user)
    accepted = accept_run(key, thread.id)
    return McpSession(accepted.token, paths, credentials.key_hash)


def close_session(session: McpSession) -> None:
    """End the run the session opened (a run token's run is its runtime's to end)."""
    if not session.opened_by or session.ended:
        return
    session.ended = True
    try:
        principal = session.principal()
    except ApiError:
        return  # the run is gone (its person erased, its workspace deleted)
    end_run(principal, run_of(principal).id)
