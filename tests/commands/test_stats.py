"""stats: what each workspace and agent keeps, as text and as JSON."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from records.models import PurgeJob
from records.services.records import add_record
from tests.commands.conftest import run, run_json
from tests.factories import create_agent, create_memory
from tests.facts.conftest import run_for, save
from tests.records.conftest import record_memory


@pytest.fixture
def busy(tenant, agent, owner, platform_provider):
    """Facts (one rewritten), a file memory with history, two records, a failed purge."""
    _, api = run_for(tenant, agent, "alice")
    first = save(api, "notes/", "tea")
    save(api, "notes/", "green tea", replaces=first["id"])
    save(api, "users/{user}/", "Oslo")
    create_agent(tenant.owner, {"name": "Quiet"})
    files = create_memory(tenant.owner, {"name": "Handbook", "type": "postgres"})
    url = f"/api/v1/memories/{files.id}/files/guide.md"
    etag = owner.put(url, {"content": "v1"}).headers["ETag"]
    assert owner.put(url, {"content": "v2 longer"}, HTTP_IF_MATCH=etag).status_code == 200
    records = record_memory(tenant, platform_provider)
    for text in ("likes tea", "lives in Oslo"):
        add_record(tenant.owner, records, text=text, metadata={})
    PurgeJob.objects.create(
        workspace=tenant.workspace, provider=platform_provider, namespace="gone",
        memory_id="mem_gone", status=PurgeJob.Status.FAILED,
    )  # fmt: skip
    return tenant


def test_stats_counts_every_kind_per_workspace_and_agent(busy):
    [ws] = run_json("stats", "Acme", "--records")
    assert (ws["facts"], ws["fact_bytes"]) == (2, len("green tea") + len("Oslo"))
    assert ws["versions"] >= 3  # every version of every fact, the current ones included
    assert (ws["files"], ws["revisions"], ws["content_bytes"]) == (1, 2, len("v2 longer"))
    assert ws["records"] == 2 and ws["record_memories"] == 1
    assert (ws["runs"], ws["purges_failed"], ws["purges_pending"]) == (1, 1, 0)
    by_name = {agent["name"]: agent for agent in ws["agents"]}
    assert by_name["Support bot"]["facts"] == 2 and by_name["Support bot"]["runs"] == 1
    assert by_name["Quiet"]["facts"] == 0


def test_stats_as_text_and_without_asking_mem0(busy):
    text = run("stats")
    assert "facts 2" in text and "revisions 2" in text and "records -" in text
    assert "agent " in text and "Quiet" in text
    assert run_json("stats")[0]["records"] is None


def test_stats_refuses_an_unknown_workspace(db):
    with pytest.raises(CommandError, match="no workspace"):
        run("stats", "ws_nope")


def test_stats_as_a_process(manage, tenant):
    done = manage("stats", tenant.workspace.id, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["facts"] == 0
    assert manage("stats", "ws_nope").returncode == 1
