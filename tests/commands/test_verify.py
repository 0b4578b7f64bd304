"""verify: finds counters and statistics corrupted on purpose; --repair mends them."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from facts.models import FactQuota, FactTerm
from filememory.models import Revision
from memoryhub.models import Memory
from tests.commands.conftest import run, run_json
from tests.factories import create_memory
from tests.facts.conftest import run_for, save


@pytest.fixture
def data(tenant, agent, owner):
    _, api = run_for(tenant, agent, "alice")
    save(api, "notes/", "green tea")
    save(api, "users/{user}/", "lives in Oslo")
    files = create_memory(tenant.owner, {"name": "Handbook", "type": "postgres"})
    url = f"/api/v1/memories/{files.id}/files/guide.md"
    etag = owner.put(url, {"content": "v1"}).headers["ETag"]
    owner.put(url, {"content": "v2 longer"}, HTTP_IF_MATCH=etag)
    return files


def _verify(*args: str) -> dict:
    try:
        return run_json("verify", *args)
    except CommandError:
        pytest.fail("verify found differences")


def test_a_consistent_database_has_no_differences(data):
    assert _verify() == {"differences": [], "repaired": []}
    assert "no differences" in run("verify")


def test_corrupted_counters_are_found_and_repaired(data, capsys):
    FactQuota.objects.update(count=99)
    Memory.objects.filter(pk=data.pk).update(content_bytes=1, history_bytes=0)
    FactTerm.objects.filter(term="").update(facts=7)
    with pytest.raises(CommandError, match="difference"):
        run("verify")
    found = run_json_allowing_failure("verify")
    checks = {d["check"] for d in found["differences"]}
    assert {"fact_counters", "content_bytes", "history_bytes", "term_statistics"} <= checks
    repaired = _verify("--repair")
    assert repaired["differences"] == []
    assert set(repaired["repaired"]) == {"fact counters", "file memory counters", "term statistics"}
    assert sum(FactQuota.objects.values_list("count", flat=True)) == 2
    memory = Memory.objects.get(pk=data.pk)
    assert memory.content_bytes == len("v2 longer") and memory.history_bytes > 0
    assert _verify() == {"differences": [], "repaired": []}


def test_revisions_beyond_the_limit_are_reported_not_repaired(data, settings):
    settings.MEMORYHUB_SETTINGS = {**settings.MEMORYHUB_SETTINGS, "memory.revisions_per_file": 1}
    found = run_json_allowing_failure("verify", "--repair")
    [difference] = found["differences"]
    assert difference["check"] == "revisions_per_file" and difference["repairable"] is False
    assert Revision.objects.count() == 2  # verify deletes no history


def test_as_a_process(manage, tenant, agent):
    _, api = run_for(tenant, agent, "alice")
    save(api, "notes/", "tea")
    FactQuota.objects.update(count=5)
    found = manage("verify", "--json")
    assert found.returncode == 1
    assert json.loads(found.stdout)["differences"][0]["expected"] == 1
    assert manage("verify", "--repair").returncode == 0
    assert manage("verify").returncode == 0


def run_json_allowing_failure(*args: str) -> dict:
    """verify's JSON when it exits 1 for the differences it found."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    with pytest.raises(CommandError):
        call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())
