"""An agent's facts in the panel: the folder tree, the list and search (the API's own
serializers and services), a fact with its versions and their diffs (a page at a time: an
agent may write any number), and forgetting one."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from facts import paths, validation
from facts.models import FactVersion
from facts.scope import FactScope, for_staff
from facts.serializers import FactListQuerySerializer, FactSearchQuerySerializer
from facts.services import reading, writing
from memoryhub.errors import ApiError
from memoryhub.models import Agent, Permission
from memoryhub.rules import parse
from panel.diffs import Budget, word_diff
from panel.services import facts as shown_facts
from panel.services.access import Seat, seat
from panel.views.base import panel_page, refused

SEARCH_K = 50  # a search shows the best 50


def _agent_scope(request: HttpRequest, workspace_id: str, agent_id: str) -> tuple[Seat, FactScope]:
    here = seat(request.user, workspace_id)
    return here, for_staff(here.principal, agent_id)


def _agent(here: Seat, agent_id: str) -> Agent:
    return Agent.objects.get(workspace=here.workspace, pk=agent_id)


@panel_page
def fact_list(request: HttpRequest, workspace_id: str, agent_id: str) -> HttpResponse:
    here, scope = _agent_scope(request, workspace_id, agent_id)
    context = {"seat": here, "agent": _agent(here, agent_id), "params": request.GET}
    try:
        context["tree"], context["tree_cut"] = shown_facts.folder_tree(scope)
        if request.GET.get("query", "").strip():
            params = request.GET.copy()
            params.setdefault("k", str(SEARCH_K))
            data = parse(FactSearchQuerySerializer, params)
            folder = paths.resolve(data["path"], scope.viewer)
            found = reading.search_facts(
                scope, data["query"], folders=[folder], tags=data.get("tags"), k=data["k"]
            )
            context.update(facts=found, searching=True)
        else:
            page = reading.list_facts(scope, **parse(FactListQuerySerializer, request.GET))
            context.update(facts=page.facts, next=page.next)
    except ApiError as error:
        context["facts"] = []
        return refused(request, error, context, "panel/facts/list.html")
    return render(request, "panel/facts/list.html", context)


@panel_page
def fact_detail(
    request: HttpRequest, workspace_id: str, agent_id: str, fact_id: str
) -> HttpResponse:
    """A fact with one page of its versions (``?page=``, newest first), each with its diff."""
    here, scope = _agent_scope(request, workspace_id, agent_id)
    try:
        fact = reading.get_fact(scope, fact_id)
    except ApiError as error:
        return refused(request, error, {"seat": here})
    shown = shown_facts.versions_page(scope, fact, request.GET.get("page"))
    context = {
        "seat": here,
        "agent": _agent(here, agent_id),
        "fact": fact,
        "page": shown.page,
        "rows": _version_rows(list(shown.page.object_list), shown.older),
    }
    return render(request, "panel/facts/detail.html", context)


def _version_rows(versions: list[FactVersion], before: FactVersion | None) -> list[dict]:
    """Each version of a page (newest first) with what changed from the one before it; the
    page's oldest compares with ``before``, the version just older than the page."""
    rows, budget = [], Budget()  # one budget for every version's diff on the page
    for index, version in enumerate(versions):
        older = versions[index + 1] if index + 1 < len(versions) else before
        rows.append(
            {
                "version": version,
                "diff": word_diff(older.text, version.text, budget=budget) if older else None,
                "moved_from": older.path if older and older.path != version.path else None,
                "tags_before": list(older.tags) if older and older.tags != version.tags else None,
            }
        )
    return rows


def _number(raw: str) -> object:
    """A form's number as a float when it reads as one; else as sent, for the rule to refuse."""
    try:
        return float(raw)
    except ValueError:
        return raw


@panel_page
def fact_edit(request: HttpRequest, workspace_id: str, agent_id: str, fact_id: str) -> HttpResponse:
    """Correct a fact: a new version written by this person (the API's rules check it)."""
    here, scope = _agent_scope(request, workspace_id, agent_id)
    here.principal.require(Permission.WRITE)  # the API's own check: editors and admins
    fact = reading.get_fact(scope, fact_id)
    context = {"seat": here, "agent": _agent(here, agent_id), "fact": fact, "form": request.POST}
    if request.method != "POST":
        return render(request, "panel/facts/edit.html", context)
    try:
        version = writing.correct_fact(
            here.principal,
            scope,
            fact_id,
            text=validation.TEXT(request.POST.get("text", "").replace("\r\n", "\n")),
            tags=validation.TAGS_PARAM(request.POST.get("tags", "").replace(" ", "")),
            confidence=validation.CONFIDENCE(_number(request.POST.get("confidence", ""))),
        )
    except ApiError as error:
        return refused(request, error, context, "panel/facts/edit.html")
    messages.success(request, f"Saved version {version.version} of {fact.public_id}.")
    return redirect("panel:fact", workspace_id=workspace_id, agent_id=agent_id, fact_id=fact_id)


@panel_page
def fact_forget(
    request: HttpRequest, workspace_id: str, agent_id: str, fact_id: str
) -> HttpResponse:
    """A confirmation page; the POST deletes the fact with all its versions."""
    here, scope = _agent_scope(request, workspace_id, agent_id)
    context = {"seat": here, "agent": _agent(here, agent_id)}
    try:
        here.principal.require(Permission.WRITE)  # the API's own check: editors and admins
        fact = reading.get_fact(scope, fact_id)
        versions = reading.versions_of(scope, fact).count()  # counted, never loaded
        if request.method == "POST":
            writing.delete_fact(here.principal, scope, fact_id)
            messages.success(request, f"Forgot {fact.public_id} and its {versions} versions.")
            return redirect("panel:facts", workspace_id=workspace_id, agent_id=agent_id)
    except ApiError as error:
        return refused(request, error, context)
    context.update(fact=fact, versions=versions)
    return render(request, "panel/facts/forget.html", context)
