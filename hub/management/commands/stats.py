"""How much each workspace and agent keeps: what the limits and the bills count."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, Func, IntegerField, Sum
from django.db.models.functions import Coalesce

from facts.models import Fact, FactVersion
from filememory.models import File, Revision
from memoryhub.errors import ApiError
from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import Agent, Memory, Run, Thread, Workspace
from memoryhub.principals import Principal
from records.models import PurgeJob
from records.services.records import list_records


class OctetLength(Func):
    function = "octet_length"
    output_field = IntegerField()


def _by(queryset, key: str, **aggregates: Any) -> dict[str, dict]:
    rows = queryset.values(key).annotate(**aggregates).order_by()
    return {row.pop(key): row for row in rows}


class Command(MemoryhubCommand):
    help = (
        "Per workspace and agent: facts, versions, bytes, files, revisions, records, runs,"
        " pending and failed purges. Records are counted by asking each record memory's"
        " backend (mem0) only with --records."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("workspace", nargs="?", help="one workspace (id or name); else all")
        parser.add_argument(
            "--records", action="store_true", help="count records in mem0 (a call per memory)"
        )

    def handle(self, *args, workspace: str | None, records: bool, **options) -> None:
        workspaces = [self.workspace(workspace)] if workspace else Workspace.objects.order_by("id")
        data = [
            self._workspace(ws, records)
            for ws in self.progress(workspaces, desc="workspaces", total=len(workspaces))
        ]
        self.emit(data, lambda: "\n".join(_text(ws) for ws in data))

    def _workspace(self, ws: Workspace, count_records: bool) -> dict:
        memories = Memory.objects.filter(workspace=ws)
        files = File.objects.filter(workspace=ws)
        jobs = _by(PurgeJob.objects.filter(workspace=ws), "status", n=Count("id"))
        kept = memories.filter(kind="file").aggregate(
            content_bytes=Coalesce(Sum("content_bytes"), 0),
            history_bytes=Coalesce(Sum("history_bytes"), 0),
        )
        agents = self._agents(ws)
        return {
            "id": ws.id,
            "name": ws.name,
            "facts": sum(a["facts"] for a in agents),
            "versions": sum(a["versions"] for a in agents),
            "fact_bytes": sum(a["fact_bytes"] for a in agents),
            "file_memories": memories.filter(kind="file").count(),
            "files": files.count(),
            "revisions": Revision.objects.filter(workspace=ws).count(),
            **kept,
            "record_memories": memories.filter(kind="record").count(),
            "records": self._records(ws, memories) if count_records else None,
            "threads": Thread.objects.filter(workspace=ws).count(),
            "runs": Run.objects.filter(workspace=ws).count(),
            "purges_pending": jobs.get(PurgeJob.Status.PENDING, {}).get("n", 0),
            "purges_failed": jobs.get(PurgeJob.Status.FAILED, {}).get("n", 0),
            "agents": agents,
        }

    def _agents(self, ws: Workspace) -> list[dict]:
        facts = _by(
            Fact.objects.filter(workspace=ws, scope=""),  # eval memories are temporary
            "agent_id",
            n=Count("id"),
            bytes=Coalesce(Sum(OctetLength(F("text"))), 0),
        )
        versions = _by(FactVersion.objects.filter(workspace=ws), "agent_id", n=Count("id"))
        runs = _by(Run.objects.filter(workspace=ws), "agent_id", n=Count("id"))
        threads = _by(Thread.objects.filter(workspace=ws), "agent_id", n=Count("id"))
        return [
            {
                "id": agent.id,
                "name": agent.name,
                "facts": facts.get(agent.id, {}).get("n", 0),
                "versions": versions.get(agent.id, {}).get("n", 0),
                "fact_bytes": facts.get(agent.id, {}).get("bytes", 0),
                "mounted_memories": len(agent.memory_mounts),
                "threads": threads.get(agent.id, {}).get("n", 0),
                "runs": runs.get(agent.id, {}).get("n", 0),
            }
            for agent in Agent.objects.filter(workspace=ws).order_by("created_at", "id")
        ]

    def _records(self, ws: Workspace, memories) -> int | str:
        """The sum over record memories, as each backend answers; why not, when one fails."""
        principal = Principal.system(ws)
        total = 0
        for memory in memories.filter(kind="record").select_related("provider"):
            try:
                total += list_records(principal, memory, limit=1).count
            except ApiError as error:
                return f"unknown ({memory.id}: {error.message})"
        return total


def _text(ws: dict) -> str:
    records = "-" if ws["records"] is None else ws["records"]
    lines = [
        f"{ws['id']}  {ws['name']}",
        f"  facts {ws['facts']}  versions {ws['versions']}  fact bytes {ws['fact_bytes']}",
        f"  file memories {ws['file_memories']}  files {ws['files']}  revisions"
        f" {ws['revisions']}  content bytes {ws['content_bytes']}  history bytes"
        f" {ws['history_bytes']}",
        f"  record memories {ws['record_memories']}  records {records}",
        f"  threads {ws['threads']}  runs {ws['runs']}  purges pending {ws['purges_pending']}"
        f"  failed {ws['purges_failed']}",
    ]
    for agent in ws["agents"]:
        lines.append(
            f"  agent {agent['id']}  {agent['name']}: facts {agent['facts']}  versions"
            f" {agent['versions']}  fact bytes {agent['fact_bytes']}  threads"
            f" {agent['threads']}  runs {agent['runs']}"
        )
    return "\n".join(lines)
