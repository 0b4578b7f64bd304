"""The load checker finds each kind of damage planted in the test database, and names it."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.models import F

from bench.load import checker
from bench.load.journal import Journal, new_marker
from facts.models import FactQuota, FactTerm, FactVersion
from filememory.models import Revision
from memoryhub.models import Memory
from tests import factories

pytestmark = pytest.mark.django_db


def _pk(public_id: str) -> int:
    return int(public_id.removeprefix("m_"))


class Written:
    """Writes made over the API with a run token, journaled as the load's runtimes do."""

    def __init__(self, api, run_id: str) -> None:
        self.api, self.run_id, self.journal = api, run_id, Journal()

    def save(self, replaces: int | None = None, key: str | None = None, marker: str = "") -> int:
        marker = marker or new_marker("fact")
        body = {"path": "notes/", "text": f"tea {marker}"}
        if replaces:
            body["replaces"] = f"m_{replaces}"
        if key:
            body["key"] = key
        fact = self.api.post("/v0/memory/facts", body).json()
        self.journal.facts.append((_pk(fact["id"]), fact["version"], marker))
        if key:
            self.journal.keys.append((self.run_id, key, _pk(fact["id"]), fact["version"]))
        return _pk(fact["id"])

    def tool_save(self) -> str:
        marker, call_id = new_marker("tool"), "call_1"
        arguments = json.dumps({"text": f"tea {marker}"})
        call = {"id": call_id, "function": {"name": "save_memory", "arguments": arguments}}
        answer = self.api.post("/v0/memory/tools/call", {"paths": ["notes/"], "tool_call": call})
        assert answer.status_code == 200, answer.json()
        saved = json.loads(answer.json()["content"])
        self.journal.facts.append((_pk(saved["saved"]), saved["version"], marker))
        self.journal.tool_calls.append((self.run_id, call_id, "fact", marker))
        return marker

    def failures(self) -> list[str]:
        return checker.check(self.journal, records={})


def _drop_unique(name: str) -> None:
    """Lets the test plant what the database refuses (rolled back with the test)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks block ALTER
        cursor.execute(f"ALTER TABLE facts_factversion DROP CONSTRAINT IF EXISTS {name}")
        cursor.execute(f"DROP INDEX IF EXISTS {name}")  # a partial one is only an index


@pytest.fixture
def written(run_api, running_run) -> Written:
    """A fact at version 3, a keyed save and a tool call's save: all checked clean."""
    writes = Written(run_api, running_run[0].id)
    pk = writes.save()
    writes.save(replaces=pk)
    writes.save(replaces=pk)
    writes.save(key="greeting")
    writes.tool_save()
    writes.pk = pk
    return writes


def test_untouched_writes_pass_every_check(written):
    assert written.failures() == []


def test_a_doubled_fact_version_is_named(written):
    _drop_unique("fact_version_unique")
    copy = FactVersion.objects.get(fact_id=written.pk, version=2)
    copy.pk = None
    copy.save(force_insert=True)
    assert f"fact_versions: m_{written.pk} has version(s) [2] twice or more" in written.failures()


def test_a_gap_in_versions_is_named(written):
    FactVersion.objects.filter(fact_id=written.pk, version=2).delete()
    failures = written.failures()
    assert f"fact_versions: m_{written.pk} lacks version(s) [2]" in failures
    assert f"acknowledged_writes: fact m_{written.pk} version 2 missing" in failures


def test_a_wrong_fact_counter_is_named(written, agent):
    # One of the memory's counter rows (it may have several) counts one fact too many.
    row = FactQuota.objects.filter(agent_id=agent.id, scope="").order_by("pk").first()
    FactQuota.objects.filter(pk=row.pk).update(count=F("count") + 1)
    assert written.failures() == [f"fact_counters: {agent.id}/real counts 4 facts, holds 3"]


def test_wrong_term_statistics_are_named(written, agent):
    FactTerm.objects.filter(agent_id=agent.id, term="tea").update(facts=42)
    assert written.failures() == ["term_statistics: facts_factterm: 2 rows differ, expected 0"]


def test_a_tool_call_executed_twice_is_named(run_api, running_run):
    writes = Written(run_api, running_run[0].id)
    marker = writes.tool_save()
    run_api.post("/v0/memory/facts", {"path": "notes/", "text": f"tea {marker}"})  # its twin
    assert f"tool_calls: {writes.run_id} call call_1 (fact) executed 2 times" in writes.failures()


def test_an_idempotency_key_executed_twice_is_named(written):
    _drop_unique("fact_key_unique_per_run")
    FactVersion.objects.filter(fact_id=written.pk, version=3).update(key="greeting")
    assert f"idempotency_keys: {written.run_id} key greeting executed 2 times" in written.failures()


def test_an_acknowledged_write_missing_is_named(written, run_api):
    assert run_api.delete(f"/v0/memory/facts/m_{written.pk}").status_code == 204
    failures = written.failures()
    for version in (1, 2, 3):
        assert f"acknowledged_writes: fact m_{written.pk} version {version} missing" in failures


def test_a_lost_file_edit_is_named(written, tenant):
    written.journal.files.append(("mem_x", "notes.md", 1, "mkfilelost"))
    assert written.failures() == ["file_edits: mem_x:notes.md missing"]


def test_a_gap_in_file_versions_is_named(tenant):
    memory = factories.create_memory(tenant.owner, {"name": "Notes"})
    api = tenant.api("write")
    url = f"/api/v1/memories/{memory.id}/files/notes.md"
    etag = api.put(url, {"content": "one\n"})["ETag"]
    for text in ("two\n", "three\n"):
        etag = api.put(url, {"content": text}, HTTP_IF_MATCH=etag)["ETag"]
    assert checker.check(Journal(), records={}) == []
    Revision.objects.filter(memory=memory, version=2).delete()
    failures = checker.check(Journal(), records={})
    message = f"file_versions: {memory.id}:notes.md at version 3 keeps revisions of versions"
    assert f"{message} [1, 3]" in failures


def test_a_wrong_byte_counter_is_named(tenant):
    memory = factories.create_memory(tenant.owner, {"name": "Notes"})
    url = f"/api/v1/memories/{memory.id}/files/notes.md"
    assert tenant.api("write").put(url, {"content": "four"}).status_code == 201
    Memory.objects.filter(pk=memory.pk).update(content_bytes=5)
    assert checker.check(Journal(), records={}) == [
        f"file_counters: {memory.id} content_bytes is 5, the files sum to 4"
    ]


def test_a_server_error_is_named(written):
    written.journal.problem("save: POST /v0/memory/facts answered 500: {}")
    assert written.failures() == ["server: save: POST /v0/memory/facts answered 500: {}"]


def test_an_unfinished_purge_is_named(written):
    written.journal.purges.append(("mem_gone", "mkscratchleft"))
    records = {"rec-1": "tea mkscratchleft"}
    assert checker.check(written.journal, records) == [
        "purges: mem_gone is without a purge job",
        "purges: mem0 still holds the record mkscratchleft of mem_gone",
    ]


def test_a_write_answered_503_but_stored_is_named(written):
    # The service answered 503 to a save that it had in fact written.
    marker = new_marker("fact")
    written.save(marker=marker)
    written.journal.facts.pop()  # a refusal is never acknowledged
    written.journal.refused.append(("fact", marker))
    assert written.failures() == [
        f"refused_writes: the fact write {marker} was answered 503 but is stored"
    ]
