"""Fixtures of the facts suite: runs of several end users, eval runs, bulk seeding."""

from __future__ import annotations

import pytest
from django.db import connection

from facts import shards
from facts.models import FactQuota
from facts.terms import Memory
from tests.conftest import Api
from threads.services.runs import accept_run
from threads.services.threads import create_thread


def token_for(tenant, agent, end_user: str | None = None, **options) -> tuple:
    """(run, run token) of a new running run of ``agent`` for ``end_user``."""
    thread = create_thread(tenant.owner, agent.id, end_user=end_user)
    accepted = accept_run(tenant.owner, thread.id, **options)
    return accepted.run, accepted.token


def run_for(tenant, agent, end_user: str | None = None, **options) -> tuple:
    """(run, Api with its token) of a new running run of ``agent`` for ``end_user``."""
    run, token = token_for(tenant, agent, end_user, **options)
    return run, Api(run_token=token)


def child_of(tenant, parent, **options):
    accepted = accept_run(tenant.owner, parent.thread_id, parent_run_id=parent.id, **options)
    return accepted.run, Api(run_token=accepted.token)


@pytest.fixture
def alice(run_api) -> Api:
    """The running run of end user alice (the shared ``running_run``)."""
    return run_api


@pytest.fixture
def bob(tenant, agent) -> Api:
    return run_for(tenant, agent, "bob")[1]


@pytest.fixture
def nobody(tenant, agent) -> Api:
    """A run without an end user."""
    return run_for(tenant, agent)[1]


def save(api: Api, path: str = "notes/", text: str = "a fact", **fields):
    response = api.post("/v0/memory/facts", {"path": path, "text": text, **fields})
    assert response.status_code in (200, 201), response.content
    return response.json()


def seed_facts(agent, count: int, *, scope: str = "", path: str = "bulk/", words: str = "seed"):
    """Insert ``count`` facts in one statement and count them in the agent's quota."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO facts_fact (workspace_id, agent_id, scope, owner_id, path, text, tags,
                confidence, version, run_id, written_by, created_at, updated_at, search_text)
            SELECT %s, %s, %s, NULL, %s, %s || ' ' || n, '{}', 1, 1, 'run_seed', 'code',
                now() - make_interval(secs => %s - n), now() - make_interval(secs => %s - n),
                %s || ' ' || n
            FROM generate_series(1, %s) AS n
            """,
            [agent.workspace_id, agent.id, scope, path, words, count, count, words, count],
        )
    quota, _ = FactQuota.objects.get_or_create(
        workspace_id=agent.workspace_id, agent_id=agent.id, scope=scope, shard=0
    )
    FactQuota.objects.filter(pk=quota.pk).update(count=quota.count + count)


def counted(agent, scope: str = "") -> int:
    """The memory's fact counter, as the limit reads it (the sum of its shards)."""
    return shards.total(Memory(agent.id, scope))
