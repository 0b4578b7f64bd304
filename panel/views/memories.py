"""The workspace's memories in the panel: the list, one memory, and creating, changing and
deleting one with If-Match (the catalog's own serializers and services)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render

from memoryhub import catalog
from memoryhub.api.filters import MemoryFilter
from memoryhub.api.serializers import MemoryChange, MemoryCreate
from memoryhub.errors import ApiError
from memoryhub.etags import etag_for
from memoryhub.models import Memory, Permission
from memoryhub.rules import parse
from memoryhub.services import memories
from panel.models import Role
from panel.services.access import seat
from panel.views.base import panel_page, refused

PER_PAGE = 50
TEMPLATES = "panel/memories/"


def _filters(params: QueryDict) -> QueryDict:
    """The list's filters as given, without the empty ones a form sends for "any"."""
    kept = QueryDict(mutable=True)
    for name in ("kind", "label"):
        values = [v for v in params.getlist(name) if v.strip()]
        if values:
            kept.setlist(name, values)
    return kept


@panel_page
def memory_list(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """Every memory of the workspace, newest first, with its kind's counts (one query)."""
    here = seat(request.user, workspace_id)
    context = {"seat": here, "params": request.GET, "kinds": Memory.Kind.values}
    try:
        found = MemoryFilter(_filters(request.GET), queryset=memories.list_memories(here.principal))
        page = Paginator(found.qs, PER_PAGE).get_page(request.GET.get("page"))
    except ApiError as error:  # a filter's rule refused its value
        return refused(request, error, context, TEMPLATES + "list.html")
    stats = memories.stats_for(page.object_list)
    context.update(page=page, rows=[(m, stats.get(m.id, {})) for m in page.object_list])
    return render(request, TEMPLATES + "list.html", context)


@panel_page
def memory_detail(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    memory = memories.get_memory(here.principal, memory_id)
    context = {
        "seat": here,
        "memory": memory,
        "stats": memories.stats_for([memory]).get(memory.id, {}),
        "inherited_guide": memories.inherited_guide(memory),
        "takes_always_load": catalog.kind_named(memory.kind).always_load,
    }
    return render(request, TEMPLATES + "detail.html", context)


def _lines(text: str) -> list[str]:
    """A textarea of one item a line (labels, paths): blank lines are no item."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _fields(post: QueryDict, *, always_load: bool) -> dict:
    """The form as the API's body: a null guide when the inherited one is chosen."""
    data = {
        "name": post.get("name", ""),
        "description": post.get("description", "").replace("\r\n", "\n"),
        "labels": _lines(post.get("labels", "")),
        "guide": None if post.get("inherit_guide") else post.get("guide", "").replace("\r\n", "\n"),
    }
    if always_load:
        data["always_load"] = _lines(post.get("always_load", ""))
    return data


def _form_of(memory: Memory) -> dict:
    return {
        "name": memory.name,
        "description": memory.description,
        "labels": "\n".join(memory.labels),
        "guide": memory.guide or "",
        "inherit_guide": memory.guide is None,
        "always_load": "\n".join(memory.always_load),
        "etag": etag_for(memory.version),
    }


def _form_as_sent(post: QueryDict) -> dict:
    return {
        **{k: post.get(k, "") for k in ("name", "description", "labels", "guide", "always_load")},
        "inherit_guide": bool(post.get("inherit_guide")),
        "etag": post.get("etag", ""),
    }


@panel_page
def memory_new(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """A new file memory (type postgres)."""
    here = seat(request.user, workspace_id)
    here.principal.require(Permission.WRITE)  # the API's own check: editors and admins
    context = {"seat": here, "takes_always_load": True, "form": {"inherit_guide": True}}
    if request.method != "POST":
        return render(request, TEMPLATES + "form.html", context)
    context["form"] = _form_as_sent(request.POST)
    try:
        body = {"type": memories.DEFAULT_TYPE, **_fields(request.POST, always_load=True)}
        memory = memories.create(here.principal, **parse(MemoryCreate, body))
    except ApiError as error:
        return refused(request, error, context, TEMPLATES + "form.html")
    messages.success(request, f"Created the file memory {memory.name}.")
    return redirect("panel:memory", workspace_id=workspace_id, memory_id=memory.id)


@panel_page
def memory_edit(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """Change name, description, labels, guide and always-load paths, If-Match the ETag
    the form was read with: a stale one changes nothing and says so."""
    here = seat(request.user, workspace_id)
    here.principal.require(Permission.WRITE)
    memory = memories.get_memory(here.principal, memory_id)
    takes_always_load = catalog.kind_named(memory.kind).always_load
    context: dict[str, Any] = {
        "seat": here,
        "memory": memory,
        "takes_always_load": takes_always_load,
    }
    if request.method != "POST":
        context["form"] = _form_of(memory)
        return render(request, TEMPLATES + "form.html", context)
    context["form"] = _form_as_sent(request.POST)
    try:
        changes = parse(MemoryChange, _fields(request.POST, always_load=takes_always_load))
        memories.update(here.principal, memory_id, request.POST.get("etag", ""), **changes)
    except ApiError as error:
        if error.status == 412:  # another change came first: show it; saving again is deliberate
            context["current"] = memories.get_memory(here.principal, memory_id)
            context["form"]["etag"] = etag_for(context["current"].version)
        return refused(request, error, context, TEMPLATES + "form.html")
    messages.success(request, f"Saved {changes.get('name', memory.name)}.")
    return redirect("panel:memory", workspace_id=workspace_id, memory_id=memory_id)


@panel_page
def memory_delete(request: HttpRequest, workspace_id: str, memory_id: str) -> HttpResponse:
    """A confirmation page saying what goes; the POST deletes, If-Match the shown version.
    Admins only: it takes the whole history with it, as a purge does."""
    here = seat(request.user, workspace_id)
    here.require(Role.ADMIN)
    memory = memories.get_memory(here.principal, memory_id)
    context = {"seat": here, "memory": memory, "etag": etag_for(memory.version)}
    context["stats"] = memories.stats_for([memory]).get(memory.id, {})
    if request.method == "POST":
        try:
            memories.delete_memory(here.principal, memory_id, request.POST.get("etag", ""))
        except ApiError as error:
            return refused(request, error, context, TEMPLATES + "delete.html")
        messages.success(request, f"Deleted the memory {memory.name}.")
        return redirect("panel:memories", workspace_id=workspace_id)
    return render(request, TEMPLATES + "delete.html", context)
