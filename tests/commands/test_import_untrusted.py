"""import_memory treats its file as untrusted input (issue 38).

Anyone can edit an export and compute its manifest again, so each test here takes a real
export of the suite's data, edits it as an attacker would, writes a fresh manifest, and
asserts that the import refuses the whole file with the line and the reason, and that the
database is exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError

from facts.models import Fact
from hub.transfer import FORMAT, VERSION
from memoryhub.models import EndUser, Memory
from tests.commands import test_export_import
from tests.commands.conftest import run
from tests.commands.test_export_import import empty_database, snapshot
from tests.factories import create_agent
from tests.facts.conftest import run_for, save
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


def test_a_32_mib_fact_text_is_refused(full, tmp_path):
    items = export(tmp_path)
    empty_database()
    where = at(items, "fact", text="green tea")
    items[where]["row"]["text"] = "x" * (32 * MiB)
    edited = write_export(tmp_path / "huge.jsonl", items)
    assert_refused(edited, where + 1, "text is 1-4000 characters")


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
