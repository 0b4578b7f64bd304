"""The workspace's operations: purge jobs (with their tries, and retry) and the audit log."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.models import AuditEvent
from panel.filters import AuditFilter
from panel.models import Role
from panel.services.access import seat
from panel.views.base import panel_page, refused
from records.models import PurgeAttempt, PurgeJob
from records.services import purges

PER_PAGE = 50


@panel_page
def purge_jobs(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """Pending and failed jobs first, each with its tries (newest first)."""
    here = seat(request.user, workspace_id)
    jobs = (
        PurgeJob.objects.filter(workspace=here.workspace)
        .select_related("provider")
        .prefetch_related(
            Prefetch("attempt_log", queryset=PurgeAttempt.objects.order_by("-number"))
        )
        .order_by("status", "-created_at")
    )
    page = Paginator(jobs, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "panel/purges.html", {"seat": here, "page": page})


@require_POST
@panel_page
def purge_retry(request: HttpRequest, workspace_id: str, job_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    here.require(Role.ADMIN)
    try:
        purges.retry(job_id, workspace_id=here.workspace.id)
    except ApiError as error:
        return refused(request, error, {"seat": here})
    audit.record(here.principal, "purge.retry", "purge_job", job_id)
    messages.success(request, f"Purge {job_id} starts over.")
    return redirect("panel:purges", workspace_id=workspace_id)


@panel_page
def audit_log(request: HttpRequest, workspace_id: str) -> HttpResponse:
    here = seat(request.user, workspace_id)
    events = AuditEvent.objects.filter(workspace=here.workspace).order_by("-created_at", "-id")
    found = AuditFilter(request.GET, queryset=events)
    context = {"seat": here, "filter": found}
    if not found.is_valid():
        context["errors"] = found.errors
        return render(request, "panel/audit.html", context, status=422)
    context["page"] = Paginator(found.qs, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "panel/audit.html", context)
