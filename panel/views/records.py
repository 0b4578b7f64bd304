"""A record memory's records in the panel: list and search them (the API's services, paged
as its backend allows), correct one and delete one after a confirmation.

The records live in a mem0 backend, so every page may find it down or refusing: the page
then still renders, with the refusal as an alert and its status (503, 422 when the
provider is disabled, 409 for a write the backend did not confirm), never a 500.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.dateparse import parse_datetime
from rest_framework.request import Request

from memoryhub.errors import ApiError
from memoryhub.models import Memory, Permission
from memoryhub.parsers import parse_json_bytes
from memoryhub.rules import parse
from panel.services.access import Seat, seat
from panel.views.base import panel_page, refused
from records.backends import Record
from records.filters import RecordPagination
from records.serializers import MemoryRecordChangeSerializer, MemoryRecordSearchSerializer
from records.services import records

SEARCH_K = 50  # a search shows the best 50 (the API allows up to records.MAX_K)


@dataclass(frozen=True)
class RecordRow:
    """A record as a row: its metadata as JSON text, its times as datetimes."""

    record: Record
    metadata: str
    updated: datetime | None


def _row(record: Record) -> RecordRow:
    metadata = json.dumps(record.metadata, ensure_ascii=False, sort_keys=True)
    when = record.updated_at or record.created_at
    return RecordRow(record, metadata if record.metadata else "", parse_datetime(when or ""))


def _memory_of(request: HttpRequest, workspace_id: str, memory_id: str) -> tuple[Seat, Memory]:
    """The user's seat and the workspace's record memory (404 for anything else)."""
    here = seat(request.user, workspace_id)
    return here, records.get_record_memory(here.principal, memory_id)


def _window(request: HttpRequest) -> tuple[int, int]:
    """``?limit=&offset=`` checked as the API checks them (422 out of bounds)."""
    return RecordPagination().window(Request(request))


def _pager(limit: int, offset: int, shown: int, count: int) -> dict:
    return {
        "first": offset + 1 if shown else 0,
        "last": offset + shown,
        "count": count,
        "limit": limit,
        "previous": max(offset - limit, 0) if offset else None,
        "next": offset + limit if offset + limit < count else None,
    }


@panel_page
def record_list(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """The records newest first, a page at a time; or the best matches of a search."""
    here, memory = _memory_of(request, workspace_id, memory_id)
    context = {"seat": here, "memory": memory, "params": request.GET, "rows": []}
    try:
        if request.GET.get("query", "").strip():
            values = parse(
                MemoryRecordSearchSerializer, {"query": request.GET["query"], "k": SEARCH_K}
            )
            found = records.search_records(here.principal, memory, **values)
            context.update(rows=[_row(r) for r in found], searching=True)
        else:
            limit, offset = _window(request)
            page = records.list_records(here.principal, memory, limit=limit, offset=offset)
            rows = [_row(r) for r in page.records]
            context.update(rows=rows, pager=_pager(limit, offset, len(rows), page.count))
    except ApiError as error:
        return refused(request, error, context, "panel/records/list.html")
    return render(request, "panel/records/list.html", context)


def _metadata(raw: str) -> object:
    """The form's metadata: empty is none (null), else JSON for the rule to check."""
    if not raw.strip():
        return None
    try:
        return parse_json_bytes(raw.encode())
    except ApiError as error:
        raise ApiError(422, f"metadata is not valid JSON ({error.message})") from None


@panel_page
def record_edit(
    request: HttpRequest, workspace_id: str, memory_id: str, record_id: str
) -> HttpResponse:
    """Correct a record's text and metadata; the last write wins, as in the API."""
    here, memory = _memory_of(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)  # the API's own check: editors and admins
    context = {"seat": here, "memory": memory, "record_id": record_id, "form": request.POST}
    try:
        if request.method != "POST":
            context["row"] = _row(records.get_record(here.principal, memory, record_id))
            return render(request, "panel/records/edit.html", context)
        values = parse(
            MemoryRecordChangeSerializer,
            {
                "text": request.POST.get("text", "").replace("\r\n", "\n"),
                "metadata": _metadata(request.POST.get("metadata", "")),
            },
        )
        records.update_record(here.principal, memory, record_id, **values)
    except ApiError as error:
        return refused(request, error, context, "panel/records/edit.html")
    messages.success(request, f"Saved record {record_id}.")
    return redirect("panel:records", workspace_id=workspace_id, memory_id=memory_id)


@panel_page
def record_delete(
    request: HttpRequest, workspace_id: str, memory_id: str, record_id: str
) -> HttpResponse:
    """A confirmation page showing the record; the POST deletes it from the backend."""
    here, memory = _memory_of(request, workspace_id, memory_id)
    here.principal.require(Permission.RUN)  # the API's own check: editors and admins
    context = {"seat": here, "memory": memory, "record_id": record_id}
    try:
        if request.method == "POST":
            records.delete_record(here.principal, memory, record_id)
            messages.success(request, f"Deleted record {record_id}.")
            return redirect("panel:records", workspace_id=workspace_id, memory_id=memory_id)
        context["row"] = _row(records.get_record(here.principal, memory, record_id))
    except ApiError as error:
        return refused(request, error, context, "panel/records/delete.html")
    return render(request, "panel/records/delete.html", context)
