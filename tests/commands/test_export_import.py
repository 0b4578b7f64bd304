"""export_memory / import_memory: the round trip, damaged files, importing twice."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from facts.models import FactTerm
from hub import transfer
from hub.transfer import MODELS
from memoryhub.models import MemoryProvider
from records.services.records import add_record
from tests.commands.conftest import run, run_json
from tests.factories import create_memory
from tests.facts.conftest import run_for, save
from tests.records.conftest import record_memory


@pytest.fixture
def full(transactional_db, tenant, agent, owner, platform_provider):
    """A workspace with every kind of data: facts with versions, a person, a file memory with
    history mounted on a thread, a record memory with records in (fake) mem0."""
    _, api = run_for(tenant, agent, "alice")
    first = save(api, "notes/", "tea")
    save(api, "notes/", "green tea", replaces=first["id"])
    save(api, "users/{user}/", "lives in Oslo")
    files = create_memory(tenant.owner, {"name": "Handbook", "type": "postgres"})
    url = f"/api/v1/memories/{files.id}/files/guide.md"
    etag = owner.put(url, {"content": "v1"}).headers["ETag"]
    owner.put(url, {"content": "v2 longer"}, HTTP_IF_MATCH=etag)
    thread = run_for(tenant, agent, "bob")[0].thread
    etag = owner.get(f"/api/v1/threads/{thread.id}").headers["ETag"]
    mounted = owner.post(
        f"/api/v1/threads/{thread.id}/memories",
        {"name": "handbook", "memory_id": files.id},
        HTTP_IF_MATCH=etag,
    )
    assert mounted.status_code in (200, 201), mounted.content
    records = record_memory(tenant, platform_provider)
    for text in ("likes tea", "lives in Oslo"):
        add_record(tenant.owner, records, text=text, metadata={})
    return tenant


def snapshot() -> dict:
    """Every row that matters, by kind; term statistics too (the import recomputes them)."""
    rows = {kind: list(model.objects.order_by("pk").values()) for kind, model in MODELS.items()}
    for provider in rows["memory_provider"]:
        provider.pop("credential_encrypted")  # never exported
    for model, fields in transfer.DERIVED_FIELDS.items():  # the import's writes set them
        kind = next(kind for kind, m in MODELS.items() if m is model)
        for row in rows[kind]:
            for field in fields:
                row.pop(field)
    rows["terms"] = list(FactTerm.objects.order_by("agent", "scope", "term", "owner").values())
    return rows


def empty_database() -> None:
    call_command("flush", interactive=False, verbosity=0)


def test_an_export_imported_into_an_empty_database_gives_the_same_data(full, tmp_path):
    before = snapshot()
    assert all(before[kind] for kind in ("fact_version", "revision", "thread_mount", "terms"))
    path = tmp_path / "acme.jsonl"
    summary = run_json("export_memory", "Acme", "--output", str(path))
    assert summary["counts"]["record"] == 2 and summary["counts"]["revision"] == 2
    manifest = json.loads(path.read_text().splitlines()[-1])
    assert manifest["version"] == 1 and manifest["counts"] == summary["counts"]
    assert "credential" not in path.read_text()
    records = [json.loads(line).get("row", {}) for line in path.read_text().splitlines()]
    assert {"likes tea", "lives in Oslo"} <= {r.get("text") for r in records}
    empty_database()
    imported = run_json("import_memory", str(path))
    assert imported["added"]["fact"] == 2 and imported["added"]["fact_version"] > 0
    after = snapshot()
    for kind in before:
        for old, new in zip(before[kind], after[kind], strict=False):
            diff = {k: (v, new.get(k)) for k, v in old.items() if new.get(k) != v}
            assert not diff, (kind, diff)
    assert after == before
    again = run_json("import_memory", str(path))
    assert set(again["added"].values()) == {0}  # importing twice adds nothing
    assert snapshot() == before


def test_one_agent_or_one_memory(full, agent, tmp_path):
    path = tmp_path / "agent.jsonl"
    counts = run_json("export_memory", "Acme", "--agent", agent.name, "-o", str(path))["counts"]
    assert counts["agent"] == 1 and counts["fact"] == 2 and counts["thread_mount"] == 1
    assert counts["memory"] == 1  # the memory its thread mounts, not the record memory
    handbook = MODELS["memory"].objects.get(name="Handbook")
    path = tmp_path / "memory.jsonl"
    counts = run_json("export_memory", "Acme", "--memory", handbook.id, "-o", str(path))["counts"]
    assert counts == {"workspace": 1, "memory": 1, "file": 1, "revision": 2}


def _damaged(tmp_path, source, how: str):
    lines = source.read_text().splitlines(keepends=True)
    if how == "checksum":
        at = next(i for i, line in enumerate(lines) if "green tea" in line)
        lines[at] = lines[at].replace("green tea", "green tee")  # still valid JSON
    elif how == "truncated":
        lines = lines[:5] + [lines[5][:20]]
    elif how == "version":
        header = json.loads(lines[0])
        lines[0] = json.dumps({**header, "version": 99}) + "\n"
    elif how == "no manifest":
        lines = lines[:-1]
    path = tmp_path / f"{how}.jsonl"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("checksum", "checksum"),
        ("truncated", "not whole JSON"),
        ("version", "format version 99"),
        ("no manifest", "no manifest"),
    ],
)
def test_a_damaged_file_is_refused_before_anything_is_written(full, tmp_path, how, message):
    source = tmp_path / "acme.jsonl"
    run("export_memory", "Acme", "--output", str(source), "--no-records")
    empty_database()
    with pytest.raises(CommandError, match=message):
        run("import_memory", str(_damaged(tmp_path, source, how)))
    assert all(not rows for rows in snapshot().values())


def test_as_processes(full, manage, tmp_path):
    exported = manage("export_memory", "Acme", "--no-records")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout.splitlines()[0])["format"] == "memoryhub-export"
    (tmp_path / "x.jsonl").write_text(exported.stdout[:-40])
    refused = manage("import_memory", str(tmp_path / "x.jsonl"))
    assert refused.returncode == 1 and "nothing written" in refused.stderr
    assert manage("export_memory", "ws_nope").returncode == 1
    assert MemoryProvider.objects.count() == 1
