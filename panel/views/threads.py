"""Threads and runs in the panel: which memories each thread mounts, and each run with what
it received (frozen mounts, context block, tools), its tool calls and what it wrote."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import Agent, Thread
from panel.services.access import seat
from panel.services.runs import ROWS, as_text, receipt_of, received, runs_of, with_counts
from panel.views.base import panel_page, refused
from threads.filters import ThreadFilter
from threads.services import mounts, runs, threads

PER_PAGE = 50
FILTERS = ("agent_id", "status", "end_user")


@panel_page
def thread_list(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """The workspace's threads, newest first, narrowed by the API's own filters."""
    here = seat(request.user, workspace_id)
    # An empty box of the form is no filter (the API's ``?agent_id=`` would match nothing).
    params = {name: request.GET[name] for name in FILTERS if request.GET.get(name)}
    context = {
        "seat": here,
        "params": params,
        "query": urlencode(params),  # the filters, kept by the pager's links
        "agents": Agent.objects.filter(workspace=here.workspace).order_by("name", "id"),
        "statuses": Thread.Status.values,
    }
    try:
        found = ThreadFilter(params, queryset=threads.list_threads(here.principal)).qs
    except ApiError as error:  # a status the API refuses: the same message
        return refused(request, error, context, "panel/threads/list.html")
    page = Paginator(with_counts(found), PER_PAGE).get_page(request.GET.get("page"))
    context["page"] = page
    return render(request, "panel/threads/list.html", context)


@panel_page
def thread_detail(request: HttpRequest, workspace_id: str, thread_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    thread = threads.get_thread(here.principal, thread_id)  # 404 outside the workspace
    page = Paginator(runs_of(thread.id), PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "seat": here,
        "thread": thread,
        "mounts": mounts.thread_mounts(thread),
        "page": page,
        "runs": [(run, None if run.input is None else as_text(run.input)) for run in page],
    }
    return render(request, "panel/threads/detail.html", context)


@panel_page
def run_detail(request: HttpRequest, workspace_id: str, run_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    run = runs.get_run(here.principal, run_id)  # 404 outside the workspace
    context = {
        "seat": here,
        "run": run,
        "input": None if run.input is None else as_text(run.input),
        "received": received(run),
        "receipt": receipt_of(run),
        "context_limit": int(setting("memory.context_bytes")),
        "rows": ROWS,
    }
    return render(request, "panel/threads/run.html", context)
