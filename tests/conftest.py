"""Personas and clients shared by every test suite.

The personas of a workspace: an owner key with ``write``, a key with ``run``, a key with
``read``, another workspace's ``write`` key, a running run's token and an ended run's token.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from memoryhub.models import Workspace
from memoryhub.principals import Principal
from memoryhub.services.workspaces import create_api_key, create_workspace
from tests.factories import create_agent
from threads.services.runs import accept_run, end_run
from threads.services.threads import create_thread


class Api(APIClient):
    """An APIClient that sends JSON by default and keeps one credential."""

    def __init__(self, *, key: str | None = None, run_token: str | None = None) -> None:
        super().__init__()
        headers = {}
        if key:
            headers["HTTP_AUTHORIZATION"] = f"Bearer {key}"
        if run_token:
            headers["HTTP_X_AGENTOS_RUN_TOKEN"] = run_token
        self.credentials(**headers)

    def generic(self, method, path, data="", content_type="application/json", **extra):
        return super().generic(method, path, data, content_type, **extra)

    def post(self, path, data=None, format="json", **extra):
        return super().post(path, data, format=format, **extra)

    def put(self, path, data=None, format="json", **extra):
        return super().put(path, data, format=format, **extra)

    def patch(self, path, data=None, format="json", **extra):
        return super().patch(path, data, format=format, **extra)


@dataclass
class Tenant:
    workspace: Workspace
    owner: Principal
    keys: dict[str, str]  # permission -> secret

    def api(self, permission: str = "write") -> Api:
        return Api(key=self.keys[permission])


def make_tenant(name: str) -> Tenant:
    workspace = create_workspace(name)
    keys = {p: create_api_key(workspace, p)[1] for p in ("read", "run", "write")}
    return Tenant(workspace, Principal.system(workspace), keys)


@pytest.fixture
def tenant(db) -> Tenant:
    return make_tenant("Acme")


@pytest.fixture
def other_tenant(db) -> Tenant:
    return make_tenant("Other")


@pytest.fixture
def owner(tenant) -> Api:
    return tenant.api("write")


@pytest.fixture
def runner(tenant) -> Api:
    return tenant.api("run")


@pytest.fixture
def reader(tenant) -> Api:
    return tenant.api("read")


@pytest.fixture
def stranger(other_tenant) -> Api:
    return other_tenant.api("write")


@pytest.fixture
def anonymous() -> Api:
    return Api()


@pytest.fixture
def agent(tenant):
    return create_agent(tenant.owner, {"name": "Support bot"})


@pytest.fixture
def thread(tenant, agent):
    return create_thread(tenant.owner, agent.id, end_user="alice")


@pytest.fixture
def running_run(tenant, thread):
    """(run, token) of a running run on ``thread`` (end user alice)."""
    accepted = accept_run(tenant.owner, thread.id, input={"message": "hi"})
    return accepted.run, accepted.token


@pytest.fixture
def ended_run(tenant, thread):
    accepted = accept_run(tenant.owner, thread.id)
    end_run(tenant.owner, accepted.run.id)
    accepted.run.refresh_from_db()
    return accepted.run, accepted.token


@pytest.fixture
def run_api(running_run) -> Api:
    return Api(run_token=running_run[1])


@pytest.fixture
def ended_run_api(ended_run) -> Api:
    return Api(run_token=ended_run[1])


def error_of(response) -> dict:
    """The error envelope's body, asserting the envelope's shape."""
    payload = response.json()
    assert set(payload) == {"error"}, payload
    assert {"code", "message"} <= set(payload["error"]), payload
    return payload["error"]
