"""Writing an export: what a workspace, one agent or one memory holds, row by row."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import models
from django.db.models import Q, QuerySet

from facts.models import Fact, FactQuota, FactVersion
from filememory.models import File, Revision
from hub.transfer.format import (
    BATCH,
    FORMAT,
    MODELS,
    VERSION,
    Encoder,
    fields_of,
)
from memoryhub.models import Agent, EndUser, Memory, MemoryProvider, Thread, Workspace
from memoryhub.principals import Principal
from records.services.records import MAX_LIST_LIMIT, list_records
from threads.models import ThreadMount


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
        return {kind: picked[kind] for kind in MODELS if kind in picked}  # references first
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


def row_of(obj: models.Model) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in fields_of(type(obj))}


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
    digest, counts = hashlib.sha256(), Counter[str]()

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
