"""export_memory / import_memory: a workspace, one agent or one memory as JSON Lines.

The file is a header line (format name and version, what was exported), one line per row
``{"kind": ..., "row": {...}}`` (every concrete field by its column name, ids kept), and a
manifest line last: counts per kind and the SHA-256 of every line before it. Rows are read
with ``iterator()`` and written one at a time, and the import reads the file twice (first
to check it whole, then to write), so memory stays constant however big the data.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models, transaction
from django.db.models import Q, QuerySet

from facts.models import Fact, FactQuota, FactVersion
from filememory.models import File, Revision
from memoryhub.models import Agent, EndUser, Memory, MemoryProvider, Thread, Workspace
from memoryhub.principals import Principal
from records.services.records import MAX_LIST_LIMIT, list_records
from threads.models import ThreadMount

FORMAT = "memoryhub-export"
VERSION = 1
BATCH = 500

# Import order: a row's references come before it (the foreign keys are also deferred).
MODELS: dict[str, type[models.Model]] = {
    "workspace": Workspace,
    "memory_provider": MemoryProvider,
    "agent": Agent,
    "end_user": EndUser,
    "memory": Memory,
    "thread": Thread,
    "thread_mount": ThreadMount,
    "fact": Fact,
    "fact_version": FactVersion,
    "fact_quota": FactQuota,
    "file": File,
    "revision": Revision,
}
# Never leaves the database: a provider is exported without its credential.
SECRET_FIELDS = {MemoryProvider: {"credential_encrypted"}}
# Kept by the database's triggers for the in-process search index (facts.postings): an
# import's own writes set them anew.
DERIVED_FIELDS = {Fact: {"change_shard", "change_no"}, FactQuota: {"changes"}}


class Encoder(DjangoJSONEncoder):
    """Times to the microsecond (Django's encoder keeps milliseconds only)."""

    def default(self, o: object) -> object:
        if isinstance(o, datetime):
            return o.isoformat()
        return super().default(o)


class DamagedFile(Exception):
    """The file is not a whole export of a format this version reads."""


@dataclass
class Scope:
    workspace: Workspace
    agent: Agent | None = None
    memory: Memory | None = None

    def describe(self) -> dict:
        return {
            "workspace": self.workspace.id,
            "agent": self.agent and self.agent.id,
            "memory": self.memory and self.memory.id,
        }


def selection(scope: Scope) -> dict[str, QuerySet]:
    """What one export holds, per kind, as lazy querysets."""
    ws = scope.workspace
    if scope.memory is not None:
        memories = Memory.objects.filter(pk=scope.memory.pk)
        picked = {"workspace": Workspace.objects.filter(pk=ws.pk), "memory": memories}
        picked["memory_provider"] = MemoryProvider.objects.filter(memories__in=memories)
        picked["file"] = File.objects.filter(memory__in=memories)
        picked["revision"] = Revision.objects.filter(memory__in=memories)
        return picked
    agents = Agent.objects.filter(workspace=ws)
    threads = Thread.objects.filter(workspace=ws)
    memories = Memory.objects.filter(workspace=ws)
    end_users = EndUser.objects.filter(workspace=ws)
    if scope.agent is not None:
        agents = agents.filter(pk=scope.agent.pk)
        threads = threads.filter(agent=scope.agent)
        mounted = [m["memory_id"] for m in scope.agent.memory_mounts]
        memories = memories.filter(Q(pk__in=mounted) | Q(thread_mounts__thread__in=threads))
        facts_owners = Fact.objects.filter(agent=scope.agent).values("owner_id")
        end_users = end_users.filter(Q(threads__in=threads) | Q(id__in=facts_owners))
    memories, end_users = memories.distinct(), end_users.distinct()
    return {
        "workspace": Workspace.objects.filter(pk=ws.pk),
        "memory_provider": MemoryProvider.objects.filter(memories__in=memories).distinct(),
        "agent": agents,
        "end_user": end_users,
        "memory": memories,
        "thread": threads,
        "thread_mount": ThreadMount.objects.filter(thread__in=threads),
        "fact": Fact.objects.filter(workspace=ws, agent__in=agents),
        "fact_version": FactVersion.objects.filter(workspace=ws, agent__in=agents),
        "fact_quota": FactQuota.objects.filter(workspace=ws, agent__in=agents),
        "file": File.objects.filter(memory__in=memories),
        "revision": Revision.objects.filter(memory__in=memories),
    }


def _fields(model: type[models.Model]) -> list[models.Field]:
    """What a row carries: not secrets, not what the database generates (search vectors,
    change stamps)."""
    left_out = SECRET_FIELDS.get(model, set()) | DERIVED_FIELDS.get(model, set())
    fields = model._meta.concrete_fields
    return [f for f in fields if f.attname not in left_out and not getattr(f, "generated", False)]


def row_of(obj: models.Model) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in _fields(type(obj))}


def records_of(memory: Memory) -> Iterator[dict]:
    """A record memory's records, read from mem0 through its provider, page by page."""
    principal = Principal.system(memory.workspace)
    offset = 0
    while True:
        page = list_records(principal, memory, limit=MAX_LIST_LIMIT, offset=offset)
        for record in page.records:
            yield {"memory_id": memory.id, **record.as_json()}
        offset += len(page.records)
        if not page.records or offset >= page.count:
            return


def export_lines(scope: Scope, *, with_records: bool = True) -> Iterator[tuple[str, str]]:
    """(kind, line) for every line of the export, the manifest last."""
    digest, counts = hashlib.sha256(), Counter()

    def line(kind: str, payload: dict) -> str:
        text = json.dumps({"kind": kind, **payload}, cls=Encoder) + "\n"
        digest.update(text.encode())
        counts[kind] += 1
        return text

    yield "header", line("header", {"format": FORMAT, "version": VERSION, **scope.describe()})
    counts.pop("header")
    picked = selection(scope)
    for kind, queryset in picked.items():
        for obj in queryset.order_by("pk").iterator(chunk_size=BATCH):
            yield kind, line(kind, {"row": row_of(obj)})
    if with_records:
        for memory in picked["memory"].filter(kind="record").order_by("pk"):
            for record in records_of(memory):
                yield "record", line("record", {"row": record})
    manifest = {"format": FORMAT, "version": VERSION, "counts": dict(counts)}
    summary = {"kind": "manifest", **manifest, "sha256": digest.hexdigest()}
    yield "manifest", json.dumps(summary) + "\n"


def check(lines: Iterable[str]) -> dict[str, int]:
    """Read a whole export and answer its counts; DamagedFile when anything is off."""
    digest, counts, manifest = hashlib.sha256(), Counter(), None
    for number, text in enumerate(lines, start=1):
        if manifest is not None:
            raise DamagedFile(f"line {number}: more after the manifest")
        try:
            item = json.loads(text)
        except ValueError:
            raise DamagedFile(f"line {number} is not whole JSON (a truncated file?)") from None
        kind = item.get("kind") if isinstance(item, dict) else None
        if number == 1 and (kind != "header" or item.get("format") != FORMAT):
            raise DamagedFile("line 1 is not a memoryhub export header")
        if number == 1 and item.get("version") != VERSION:
            raise DamagedFile(f"format version {item.get('version')!r}; this reads {VERSION}")
        if kind == "manifest":
            manifest = item
            continue
        if not text.endswith("\n"):
            raise DamagedFile(f"line {number} is cut short (a truncated file?)")
        if kind != "header" and kind not in MODELS and kind != "record":
            raise DamagedFile(f"line {number}: unknown kind {kind!r}")
        digest.update(text.encode())
        counts[kind] += 1
    if manifest is None:
        raise DamagedFile("no manifest at the end (a truncated file?)")
    if manifest.get("sha256") != digest.hexdigest():
        raise DamagedFile("the checksum does not match: the file was changed or damaged")
    counts.pop("header", None)
    if manifest.get("counts") != dict(counts):
        raise DamagedFile("the counts do not match the manifest")
    return dict(counts)


@contextmanager
def stored_times() -> Iterator[None]:
    """Keep the exported created_at/updated_at: auto_now fields would stamp the import time."""
    changed = []
    for model in MODELS.values():
        for field in model._meta.concrete_fields:
            if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                changed.append((field, field.auto_now, field.auto_now_add))
                field.auto_now = field.auto_now_add = False
    try:
        yield
    finally:
        for field, auto_now, auto_now_add in changed:
            field.auto_now, field.auto_now_add = auto_now, auto_now_add


def _instance(model: type[models.Model], row: dict) -> models.Model:
    values = {f.attname: f.to_python(row[f.attname]) for f in _fields(model) if f.attname in row}
    return model(**values)


def import_lines(lines: Iterable[str]) -> dict[str, int]:
    """Write a checked export; rows whose id exists already are left as they are.

    Answers how many rows of each kind were added. Records stay in mem0 (see the README).
    """
    before = {kind: model.objects.count() for kind, model in MODELS.items()}
    with transaction.atomic(), stored_times():
        pending: dict[str, list[models.Model]] = {}
        for text in lines:
            item = json.loads(text)
            model = MODELS.get(item["kind"])
            if model is None:  # the header, records, the manifest
                continue
            batch = pending.setdefault(item["kind"], [])
            batch.append(_instance(model, item["row"]))
            if len(batch) >= BATCH:
                model.objects.bulk_create(batch, ignore_conflicts=True)
                batch.clear()
        for kind, batch in pending.items():
            MODELS[kind].objects.bulk_create(batch, ignore_conflicts=True)
        _reset_sequences()
    return {kind: model.objects.count() - before[kind] for kind, model in MODELS.items()}


def _reset_sequences() -> None:
    """Rows came with their ids: the next id a serial column hands out must be past them."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(MODELS.values()))
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
