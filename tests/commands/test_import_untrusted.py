"""import_memory treats its file as untrusted input (issue 38).

Anyone can edit an export and compute its manifest again, so each test here takes a real
export of the suite's data, edits it as an attacker would, writes a fresh manifest, and
asserts that the import refuses the whole file with the line and the reason, and that the
database is exactly as it was.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError

from facts.models import Fact
from filememory.models import Revision
from hub import transfer
from hub.transfer import FORMAT, VERSION
from memoryhub.models import EndUser, Memory, MemoryProvider
from tests import factories
from tests.commands import test_export_import
from tests.commands.conftest import run
from tests.commands.test_export_import import empty_database, snapshot
from tests.conftest import make_tenant
from tests.factories import create_agent
from tests.facts.conftest import run_for, save
from tests.records.conftest import PLATFORM_KEY, record_memory
from threads.models import ThreadMount
from threads.services.threads import create_thread

MiB = 1024 * 1024
full = test_export_import.full  # the suite's data: every kind of row


def read_export(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_export(path: Path, items: list[dict]) -> Path:
    """The header and rows of ``items`` with a manifest computed anew."""
    body = "".join(json.dumps(item) + "\n" for item in items if item["kind"] != "manifest")
    counts = Counter(item["kind"] for item in items if item["kind"] not in ("header", "manifest"))
    manifest = {
        "kind": "manifest",
        "format": FORMAT,
        "version": VERSION,
        "counts": dict(counts),
        "sha256": hashlib.sha256(body.encode()).hexdigest(),
    }
    path.write_text(body + json.dumps(manifest) + "\n")
    return path


def at(items: list[dict], kind: str, **row) -> int:
    """The index of the first line of ``kind`` whose row has these values."""
    return next(
        index
        for index, item in enumerate(items)
        if item["kind"] == kind and all(item["row"].get(k) == v for k, v in row.items())
    )


def export(tmp_path: Path, workspace: str = "Acme") -> list[dict]:
    path = tmp_path / f"{workspace}.jsonl"
    run("export_memory", workspace, "--output", str(path), "--no-records")
    return read_export(path)


def assert_refused(path: Path, line: int, reason: str) -> str:
    """The import fails naming the line and the reason, and the database is unchanged."""
    before = snapshot()
    with pytest.raises(CommandError) as refused:
        run("import_memory", str(path))
    message = str(refused.value)
    assert "nothing written" in message, message
    assert f"line {line}:" in message, message
    assert reason in message, message
    assert snapshot() == before
    return message


@pytest.fixture
def other(full, other_tenant):
    """A second workspace with an agent, a person, a thread and a fact of its own."""
    agent = create_agent(other_tenant.owner, {"name": "Other bot"})
    _, api = run_for(other_tenant, agent, "carol")
    save(api, "notes/", "the other workspace's secret")
    thread = create_thread(other_tenant.owner, agent.id, end_user="carol")
    return other_tenant.workspace, thread


def test_a_mount_of_another_workspaces_memory_is_refused(other, tmp_path):
    workspace, thread = other
    handbook = Memory.objects.get(name="Handbook")  # Acme's file memory
    items = export(tmp_path, "Other")
    mount = {
        "id": 10**9,
        "workspace_id": workspace.id,
        "thread_id": thread.id,
        "name": "handbook",
        "memory_id": handbook.id,
        "access": "read",
        "recall": True,
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    where = at(items, "fact")  # after every thread
    items.insert(where, {"kind": "thread_mount", "row": mount})
    path = write_export(tmp_path / "mounted.jsonl", items)
    assert_refused(path, where + 1, f"memory_id {handbook.id} names no memory of this file's")
    assert not ThreadMount.objects.filter(thread=thread).exists()


def test_another_workspaces_memory_copied_into_the_file_is_refused(other, tmp_path):
    """The memory's row itself, claimed for the file's workspace: it exists (so it would
    be left as it is) but in another workspace, so the mount would cross."""
    workspace, thread = other
    handbook = next(
        item
        for item in export(tmp_path)
        if item["kind"] == "memory" and item["row"]["name"] == "Handbook"
    )
    items = export(tmp_path, "Other")
    where = at(items, "end_user") + 1
    items.insert(
        where, {"kind": "memory", "row": {**handbook["row"], "workspace_id": workspace.id}}
    )
    mount = {
        "id": 10**9,
        "workspace_id": workspace.id,
        "thread_id": thread.id,
        "name": "handbook",
        "memory_id": handbook["row"]["id"],
        "access": "read",
        "recall": True,
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    items.insert(at(items, "fact"), {"kind": "thread_mount", "row": mount})
    path = write_export(tmp_path / "copied.jsonl", items)
    assert_refused(path, where + 1, "exists already, in another workspace")
    assert not ThreadMount.objects.filter(thread=thread).exists()


@pytest.mark.parametrize("bad", ["../guide.md", "notes/../../etc/passwd", "/etc/passwd"])
def test_file_paths_that_climb_are_refused(full, tmp_path, bad):
    items = export(tmp_path)
    empty_database()
    where = at(items, "file", path="guide.md")
    items[where]["row"]["path"] = bad
    path = write_export(tmp_path / "climbing.jsonl", items)
    assert_refused(path, where + 1, "path")


def test_a_fact_under_a_dot_dot_path_into_a_users_folder_is_refused(full, tmp_path):
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["path"] = "notes/../users/bob/"
    path = write_export(tmp_path / "dotdot.jsonl", items)
    assert_refused(path, where + 1, "'..' segments are not allowed")


@pytest.mark.parametrize(
    ("path", "owner_name", "reason"),
    [
        ("users/bob/", "alice", "another end user's folder"),  # alice's fact in bob's folder
        ("users/bob/", None, "another end user's folder"),  # no one's fact in bob's folder
        ("notes/", "bob", "is no end user's folder"),  # bob's private fact, shared
    ],
)
def test_a_private_fact_moved_to_another_persons_folder_is_refused(
    full, tmp_path, path, owner_name, reason
):
    people = {user.external_id: user.id for user in EndUser.objects.all()}
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="lives in Oslo")
    assert items[where]["row"]["owner_id"] == people["alice"]
    items[where]["row"].update(path=path, owner_id=people.get(owner_name))
    edited = write_export(tmp_path / "moved.jsonl", items)
    assert_refused(edited, where + 1, reason)


def test_a_version_in_another_persons_folder_is_refused(full, tmp_path):
    """The fact stays alice's; one of its versions claims to be in bob's folder."""
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact_version", text="lives in Oslo")
    items[where]["row"]["path"] = "users/bob/"
    edited = write_export(tmp_path / "version.jsonl", items)
    assert_refused(edited, where + 1, "another end user's folder")


@pytest.mark.parametrize(
    ("base_url", "reason"),
    [
        ("https://169.254.169.254/latest/meta-data", "outbound policy"),
        ("https://10.0.0.7:8000", "outbound policy"),
        ("https://user:password@mem0.example.com", "may not hold credentials"),
    ],
)
def test_a_provider_address_the_outbound_policy_refuses_is_refused(
    full, tmp_path, settings, base_url, reason
):
    items = export(tmp_path)
    empty_database()
    # As production runs: public HTTPS addresses only (the suite's fake mem0 is local).
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": False,
        "outbound.allow_http": False,
    }
    where = at(items, "memory_provider")
    items[where]["row"]["config"]["base_url"] = base_url
    edited = write_export(tmp_path / "provider.jsonl", items)
    assert_refused(edited, where + 1, reason)


def test_a_version_of_another_workspaces_fact_is_refused(other, tmp_path):
    others_fact = Fact.objects.get(text="the other workspace's secret")
    items = export(tmp_path)
    version = items[at(items, "fact_version", text="green tea")]["row"]
    where = at(items, "fact_quota")  # after the last version
    forged = {**version, "id": 10**9, "fact_id": others_fact.id, "text": "planted", "key": None}
    items.insert(where, {"kind": "fact_version", "row": forged})
    edited = write_export(tmp_path / "planted.jsonl", items)
    assert_refused(edited, where + 1, f"fact_id {others_fact.id} names no fact of this file's")
    assert not others_fact.versions.filter(text="planted").exists()


@pytest.mark.parametrize(
    ("length", "reason"),
    [
        (4001, "text is 1-4000 characters"),
        (32 * MiB, "longer than 4194304 characters, which no row of an export is"),
    ],
)
def test_a_fact_text_over_the_limit_is_refused(full, tmp_path, length, reason):
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["text"] = "x" * length
    edited = write_export(tmp_path / "huge.jsonl", items)
    assert_refused(edited, where + 1, reason)


def test_a_line_of_any_length_is_refused_without_being_read_whole(full, tmp_path):
    """A line is read up to the bound (4 MiB) and no further: a line of gigabytes is refused
    as this 64 MiB one is, without filling memory."""
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["text"] = "x" * (64 * MiB)
    edited = write_export(tmp_path / "long.jsonl", items)
    before = snapshot()
    tracemalloc.start()
    try:
        with pytest.raises(CommandError) as refused:
            run("import_memory", str(edited))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB, f"{peak / MiB:.0f} MiB held for a line of 64 MiB"
    assert f"line {where + 1}: longer than 4194304 characters" in str(refused.value)
    assert snapshot() == before


def test_a_nul_is_refused_with_its_line(full, tmp_path):
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["text"] = "green\u0000tea"
    edited = write_export(tmp_path / "nul.jsonl", items)
    assert_refused(edited, where + 1, "may not contain NUL characters")


@pytest.mark.parametrize(
    ("kind", "column"),
    [("fact", "path"), ("thread_mount", "memory_id"), ("memory", "workspace_id")],
)
def test_a_missing_column_is_refused_with_its_line(full, tmp_path, kind, column):
    items = export(tmp_path)
    empty_database()
    where = at(items, kind)
    del items[where]["row"][column]
    edited = write_export(tmp_path / "missing.jsonl", items)
    assert_refused(edited, where + 1, f"missing columns: {column}")


def test_forged_byte_counters_are_refused(full, tmp_path):
    """A memory that says it holds nothing would let its writers pass the byte limit."""
    items = export(tmp_path)
    empty_database()
    where = at(items, "memory", name="Handbook")
    items[where]["row"].update(content_bytes=0, history_bytes=0, file_count=0)
    edited = write_export(tmp_path / "counters.jsonl", items)
    assert_refused(edited, where + 1, "its files and revisions in the file make (1, 9, 11)")


def test_a_forged_fact_counter_is_refused(full, tmp_path):
    """A counter below the facts would let the agent's runs pass the fact limit."""
    items = export(tmp_path)
    empty_database()
    counters = [i for i, item in enumerate(items) if item["kind"] == "fact_quota"]
    for index in counters:
        items[index]["row"]["count"] = 0
    edited = write_export(tmp_path / "quota.jsonl", items)
    assert_refused(edited, counters[0] + 1, "says 0 facts; the file holds 2")


def test_a_row_of_another_workspace_is_refused(other, tmp_path):
    workspace, _ = other
    items = export(tmp_path)
    where = at(items, "agent")
    items[where]["row"].update(id="agt_planted", workspace_id=workspace.id)
    edited = write_export(tmp_path / "other.jsonl", items)
    assert_refused(edited, where + 1, f"belongs to workspace {workspace.id}")


@pytest.fixture
def local_mem0(monkeypatch):
    """A process reads its settings from the environment: the suite's fake mem0 is local."""
    monkeypatch.setenv("MEMORYHUB_OUTBOUND_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("MEMORYHUB_OUTBOUND_ALLOW_HTTP", "1")


def test_as_a_process_a_refusal_is_one_line_and_exit_status_1(local_mem0, full, manage, tmp_path):
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["text"] = "green\u0000tea"
    edited = write_export(tmp_path / "nul.jsonl", items)
    refused = manage("import_memory", str(edited))
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr, refused.stderr
    assert f"line {where + 1}:" in refused.stderr and "NUL" in refused.stderr
    assert not Fact.objects.exists()


def test_an_unedited_export_still_imports_whole(full, tmp_path):
    """The same file through the same helpers, unedited: every rule passes."""
    before = snapshot()
    items = export(tmp_path)
    empty_database()
    path = write_export(tmp_path / "same.jsonl", items)
    summary = json.loads(run("import_memory", str(path), "--json"))
    assert {kind: n for kind, n in summary["added"].items() if n} == summary["in_file"]
    assert snapshot() == before


@pytest.mark.parametrize("what", ["--agent", "--memory"])
def test_agent_and_memory_exports_still_import_whole(full, agent, tmp_path, what):
    records = Memory.objects.get(kind="record")
    args = ("--agent", agent.id) if what == "--agent" else ("--memory", records.id)
    path = tmp_path / "part.jsonl"
    run("export_memory", "Acme", *args, "--output", str(path), "--no-records")
    items = read_export(path)
    if what == "--memory":  # as earlier versions wrote it: the provider after its memory
        provider = items.pop(at(items, "memory_provider"))
        items.insert(at(items, "memory") + 1, provider)
        path = write_export(tmp_path / "older.jsonl", items)
    empty_database()
    summary = json.loads(run("import_memory", str(path), "--json"))
    assert {kind: n for kind, n in summary["added"].items() if n} == summary["in_file"]
    again = json.loads(run("import_memory", str(path), "--json"))
    assert set(again["added"].values()) == {0}


def test_an_agent_restored_beside_its_memory_leaves_the_memory_as_it_is(full, agent, tmp_path):
    """An agent exported, deleted and imported again: its facts and threads come back; the
    file memory it mounts, which stayed, keeps what it holds now (a file deleted since the
    export stays deleted), so its byte counters stay true."""
    path = tmp_path / "agent.jsonl"
    run("export_memory", "Acme", "--agent", agent.id, "--output", str(path), "--no-records")
    handbook = Memory.objects.get(name="Handbook")
    handbook.files.all().delete()  # as if deleted since the export (counters aside)
    facts = Fact.objects.filter(agent_id=agent.id).count()
    agent.delete()
    summary = json.loads(run("import_memory", str(path), "--json"))
    assert summary["added"]["agent"] == 1 and summary["added"]["fact"] == facts
    assert summary["added"]["file"] == 0 and not handbook.files.exists()


def test_what_only_the_database_can_refuse_refuses_the_whole_file(full, tmp_path):
    """A second copy of a version (its fact and number again, under another id) passes the
    row rules; the database's unique constraint refuses it, and the whole import with it."""
    items = export(tmp_path)
    empty_database()
    version = items[at(items, "fact_version", text="green tea")]["row"]
    where = at(items, "fact_quota")
    items.insert(where, {"kind": "fact_version", "row": {**version, "id": 10**9, "key": None}})
    edited = write_export(tmp_path / "twice.jsonl", items)
    before = snapshot()
    with pytest.raises(CommandError, match="nothing written: the database refused a row"):
        run("import_memory", str(edited))
    assert snapshot() == before


# -- a provider that exists keeps its address ---------------------------------------------


@pytest.fixture
def victim(full, other_tenant, platform_server) -> Memory:
    """Another workspace's record memory on the mem0 server Acme's provider uses."""
    provider = factories.create_provider(
        other_tenant.owner,
        {
            "type": "mem0_platform",
            "name": "shared server",
            "config": {"base_url": platform_server.url},
            "credential": {"api_key": PLATFORM_KEY},
        },
    )
    return record_memory(other_tenant, provider, namespace="victim-ns")


def add_record_memory(items: list[dict], namespace: str) -> tuple[int, str]:
    """A new record memory of the file's provider, naming ``namespace``: (its index, id)."""
    where = next(i for i, item in enumerate(items) if item.get("row", {}).get("namespace"))
    new = {**copy.deepcopy(items[where]["row"]), "id": "mem_" + "a" * 20, "name": "Stolen"}
    new["namespace"] = namespace
    items.insert(where + 1, {"kind": "memory", "row": new})
    return where + 1, new["id"]


@pytest.mark.parametrize(
    ("column", "edit"),
    [
        ("config", lambda row: row["config"].update(base_url="https://elsewhere.example.com")),
        ("config", lambda row: row["config"].update(read_timeout=30)),
        ("type", lambda row: row.update(type="mem0_oss")),
    ],
    ids=["another server", "another timeout", "another type"],
)
def test_an_existing_provider_with_another_address_is_refused(victim, tmp_path, column, edit):
    """The file says Acme's provider is elsewhere (or of another type), so the namespace of
    a new memory on it would be checked on a backend where no one uses it, while the stored
    row still points at the server another workspace shares: Acme would read, write and
    purge that workspace's records."""
    items = export(tmp_path)
    where = at(items, "memory_provider")
    edit(items[where]["row"])
    add_record_memory(items, victim.namespace)
    edited = write_export(tmp_path / "elsewhere.jsonl", items)
    assert_refused(edited, where + 1, f"exists already with another {column}")
    assert list(Memory.objects.filter(namespace="victim-ns")) == [victim]


def test_a_namespace_is_claimed_where_the_provider_is_when_the_import_writes(
    full, victim, platform_provider, tmp_path
):
    """A provider moved onto the shared server between the check and the write (a write
    key's PATCH): the new memory's namespace is claimed on the backend the stored row
    names then, never on the one the file named."""
    stored = platform_provider.config
    elsewhere = {**stored, "base_url": "https://elsewhere.example.com"}
    MemoryProvider.objects.filter(pk=platform_provider.pk).update(config=elsewhere)
    items = export(tmp_path)
    line, memory_id = add_record_memory(items, victim.namespace)
    edited = write_export(tmp_path / "moved.jsonl", items)
    with edited.open() as stream:
        checked = transfer.check(transfer.read_lines(stream))  # free on elsewhere.example
    MemoryProvider.objects.filter(pk=platform_provider.pk).update(config=stored)
    with edited.open() as stream, pytest.raises(transfer.Refused) as refused:
        transfer.import_lines(transfer.read_lines(stream), checked)
    assert f"line {line + 1}: memory {memory_id}: another memory uses this namespace" in str(
        refused.value
    )
    assert not Memory.objects.filter(pk=memory_id).exists()


# -- serial ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["thread_mount", "fact_version", "fact_quota", "file", "revision"])
def test_a_serial_id_that_would_use_up_its_sequence_is_refused(full, tmp_path, kind):
    """The import moves each sequence past the ids it wrote: at 2**63 - 1 every workspace's
    next mount, fact, file write or revision would fail."""
    items = export(tmp_path)
    empty_database()
    where = at(items, kind)
    items[where]["row"]["id"] = 2**63 - 1
    edited = write_export(tmp_path / "serial.jsonl", items)
    assert_refused(edited, where + 1, "id must be 1 to 9007199254740991")


def test_serial_ids_a_busy_installation_gave_still_import(full, tmp_path):
    """Serial ids are the exporting installation's, however far its sequences went: an
    export of a busy one imports into an empty one, and later rows get ids past them."""
    items = export(tmp_path)
    empty_database()
    where = at(items, "thread_mount")
    items[where]["row"]["id"] = 10**12
    run("import_memory", str(write_export(tmp_path / "busy.jsonl", items)))
    third = make_tenant("Third")
    memory = factories.create_memory(third.owner, {"name": "m", "type": "postgres"})
    thread = create_thread(third.owner, create_agent(third.owner, {"name": "b"}).id)
    api = third.api("write")
    etag = api.get(f"/api/v1/threads/{thread.id}").headers["ETag"]
    mounted = api.post(
        f"/api/v1/threads/{thread.id}/memories",
        {"name": "m", "memory_id": memory.id},
        HTTP_IF_MATCH=etag,
    )
    assert mounted.status_code in (200, 201), mounted.content
    assert ThreadMount.objects.get(thread_id=thread.id).id > 10**12


# -- who wrote what -----------------------------------------------------------------------

PERSON = {"written_by": "person", "run_id": "", "author": "user:ceo"}


@pytest.mark.parametrize(
    ("kind", "edit", "reason"),
    [
        ("fact", {"author": "user:ceo"}, "author: a version written by code names none"),
        ("fact", {**PERSON, "author": "the CEO"}, "author 'the CEO' is no id of a principal"),
        ("fact", {**PERSON, "author": "user:"}, "author 'user:' is no id of a principal"),
        ("fact", {**PERSON, "run_id": "run_x1"}, "a person's correction is made in no run"),
        ("fact", {"run_id": "the CEO"}, "run_id 'the CEO' is no run id"),
        ("fact_version", {**PERSON, "author": "user:ceo (verified)"}, "no id of a principal"),
        ("fact_version", {"run_id": ""}, "run_id '' is no run id"),
        ("file", {"principal_id": "ceo"}, "principal_id 'ceo' is no id of a principal"),
        ("file", {"principal_id": "system"}, "principal_id 'system' is no id of a principal"),
        ("file", {"run_id": "yesterday"}, "run_id 'yesterday' is no run id"),
        ("file", {"tool_call_id": ""}, "tool_call_id is 1-200 characters"),
        ("revision", {"principal_type": "admin"}, "principal_type is one of: api_key, run, staff"),
        ("revision", {"principal_type": "staff"}, "no id of a principal (staff user:<username>)"),
        ("revision", {"principal_id": "run_x1"}, "is no id of a principal (api_key key_...)"),
        ("revision", {"restored_from": "the CEO's copy"}, "restored_from must be a revision id"),
    ],
)
def test_a_forged_author_is_refused(full, tmp_path, kind, edit, reason):
    """The panel and the API show who wrote each version and made each change as stored:
    a file names them only in the shapes the service writes."""
    items = export(tmp_path)
    empty_database()
    where = at(items, kind)
    items[where]["row"].update(edit)
    edited = write_export(tmp_path / "author.jsonl", items)
    assert_refused(edited, where + 1, reason)


def test_history_naming_principals_of_another_installation_imports(full, tmp_path):
    """Keys, runs and staff this installation never had are history from another one."""
    items = export(tmp_path)
    empty_database()
    fact = items[at(items, "fact", text="green tea")]["row"]
    version = items[at(items, "fact_version", text="green tea")]["row"]
    for row in (fact, version):
        row.update(PERSON, author="user:someone.else@example.com")
    items[at(items, "file")]["row"].update(principal_id="run_elsewhere1", run_id="run_elsewhere1")
    items[at(items, "revision")]["row"].update(
        principal_type="staff", principal_id="user:bob", tool_call_id="call_1"
    )
    run("import_memory", str(write_export(tmp_path / "elsewhere.jsonl", items)))
    assert Fact.objects.get(text="green tea").author == "user:someone.else@example.com"
    assert Revision.objects.filter(principal_type="staff", principal_id="user:bob").exists()
