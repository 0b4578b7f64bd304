"""What the panel shows of threads and runs beyond the API's answers: the thread list's
counts, and a run's page: what it received, its tool calls and its memory receipt (every fact
version, file revision and record change it wrote). Each in a fixed number of queries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from facts.models import FACT_ID_PREFIX, Fact, FactVersion
from filememory.models import Revision
from memoryhub.models import AuditEvent, Memory, Run, Thread, ToolCall
from threads.models import RunMount, ThreadMount

ROWS = 200  # of each list on a run's page; the page says when it left more out
# Facts and runs take their times from the app servers' clocks: a fact written in a run is
# looked for among those updated since a little before the run began.
CLOCK_SKEW = timedelta(minutes=5)


def _count(rows: QuerySet, by: str) -> Coalesce:
    """How many ``rows`` each outer row has: a subquery, so a page counts only its own."""
    counted = rows.order_by().values(by).annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted), 0)


def with_counts(threads: QuerySet[Thread]) -> QuerySet[Thread]:
    """Threads with their runs counted, their last run's time and their mounts (one query
    for the page, one for its mounts)."""
    runs = Run.objects.filter(thread=OuterRef("pk"))
    return threads.annotate(
        run_count=_count(runs, "thread"),
        last_run_at=Subquery(runs.order_by("-created_at").values("created_at")[:1]),
    ).prefetch_related(Prefetch("mounts", queryset=ThreadMount.objects.select_related("memory")))


def runs_of(thread_id: str) -> QuerySet:
    """A thread's runs, newest first, each with its tool calls counted."""
    calls = ToolCall.objects.filter(run=OuterRef("pk"))
    return (
        Run.objects.filter(thread_id=thread_id)
        .select_related("end_user")
        .annotate(tool_call_count=_count(calls, "run"))
        .order_by("-created_at", "-id")
    )


def as_text(value: object) -> str:
    """A JSON value to read: a string as it is, anything else indented."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class Offered:
    name: str
    description: str
    parameters: str  # the JSON Schema, indented


@dataclass(frozen=True)
class Call:
    call: ToolCall
    arguments: str | None  # None for a call recorded before arguments were kept


@dataclass(frozen=True)
class Received:
    """What a run was given at acceptance, and what it called."""

    mounts: list[tuple[RunMount, Memory | None]]  # None: the memory was deleted since
    context_bytes: int | None  # None when not kept (before recording, or erased)
    tools: list[Offered] | None
    calls: list[Call]
    calls_cut: bool


@dataclass(frozen=True)
class Receipt:
    """What a run wrote: fact versions in the agent's real memory, file revisions still
    kept, record changes and forgotten facts (from the audit log). Memories are None where
    deleted since."""

    fact_versions: list[tuple[FactVersion, str]]  # with the fact's public id
    revisions: list[tuple[Revision, Memory | None]]
    events: list[tuple[AuditEvent, Memory | None]]
    cut: bool  # a list holds more than ROWS

    @property
    def empty(self) -> bool:
        return not (self.fact_versions or self.revisions or self.events)


def _first(qs: QuerySet) -> tuple[list, bool]:
    rows = list(qs[: ROWS + 1])
    return rows[:ROWS], len(rows) > ROWS


def received(run: Run) -> Received:
    """Three queries at most: the frozen mounts, their memories, the tool calls."""
    frozen = list(RunMount.objects.filter(run=run))
    memories = _memories(run, {m.memory_id for m in frozen})
    calls, cut = _first(ToolCall.objects.filter(run=run).order_by("created_at", "id"))
    tools = None
    if run.tools_offered is not None:
        tools = [
            Offered(
                t["function"]["name"],
                t["function"].get("description", ""),
                as_text(t["function"].get("parameters", {})),
            )
            for t in run.tools_offered
        ]
    return Received(
        mounts=[(m, memories.get(m.memory_id)) for m in frozen],
        context_bytes=None if run.context is None else len(run.context.encode("utf-8")),
        tools=tools,
        calls=[Call(c, None if c.arguments is None else as_text(c.arguments)) for c in calls],
        calls_cut=cut,
    )


def receipt_of(run: Run) -> Receipt:
    """Four queries at most: fact versions, revisions, audit events, the memories named."""
    # Through the agent's newest-facts index: versions have no index of their run.
    touched = Fact.objects.filter(
        agent_id=run.agent_id, scope="", updated_at__gte=run.created_at - CLOCK_SKEW
    )
    versions, versions_cut = _first(
        FactVersion.objects.filter(
            workspace_id=run.workspace_id, run_id=run.id, fact__in=touched.values("id")
        ).order_by("id")
    )
    revisions, revisions_cut = _first(
        Revision.objects.filter(workspace_id=run.workspace_id, run_id=run.id).order_by("id")
    )
    by_run = Q(principal_type="run", principal_id=run.id)
    events, events_cut = _first(
        AuditEvent.objects.filter(workspace_id=run.workspace_id)
        .filter(
            Q(object_type="record") & (by_run | Q(details__run=run.id))
            | Q(object_type="fact", action="fact.delete") & by_run
        )
        .order_by("created_at", "id")
    )
    named = {r.memory_id for r in revisions} | {e.details.get("memory") for e in events}
    memories = _memories(run, named)
    return Receipt(
        fact_versions=[(v, f"{FACT_ID_PREFIX}{v.fact_id}") for v in versions],
        revisions=[(r, memories.get(r.memory_id)) for r in revisions],
        events=[(e, memories.get(e.details.get("memory"))) for e in events],
        cut=versions_cut or revisions_cut or events_cut,
    )


def _memories(run: Run, ids: set) -> dict[str, Memory]:
    ids.discard(None)
    if not ids:
        return {}
    return Memory.objects.filter(workspace_id=run.workspace_id).in_bulk(list(ids))
