"""The panel's front pages: the user's workspaces and a workspace's overview."""

from __future__ import annotations

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from memoryhub.models import Agent, AuditEvent, EndUser, Memory
from panel.services.access import seat, workspaces_of
from panel.views.base import panel_page
from records.models import PurgeJob

LATEST_CHANGES = 20
LISTED = 50  # agents and memories shown on the overview


@panel_page
def index(request: HttpRequest) -> HttpResponse:
    """The user's workspaces; straight into the only one."""
    workspaces = workspaces_of(request.user)
    if len(workspaces) == 1:
        return redirect("panel:overview", workspace_id=workspaces[0][0].id)
    return render(request, "panel/index.html", {"workspaces": workspaces})


@panel_page
def overview(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """Agents, memories, people, purges and the latest changes of one workspace."""
    here = seat(request.user, workspace_id)
    workspace = here.workspace
    memories = Memory.objects.filter(workspace=workspace)
    purges = PurgeJob.objects.filter(workspace=workspace).aggregate(
        pending=Count("id", filter=Q(status=PurgeJob.Status.PENDING)),
        failed=Count("id", filter=Q(status=PurgeJob.Status.FAILED)),
    )
    context = {
        "seat": here,
        "workspaces": workspaces_of(request.user),
        "agents": Agent.objects.filter(workspace=workspace).order_by("name", "id")[:LISTED],
        "agent_count": Agent.objects.filter(workspace=workspace).count(),
        "memories": memories.order_by("name", "id")[:LISTED],
        "memory_count": memories.count(),
        "end_user_count": EndUser.objects.filter(workspace=workspace).count(),
        "purges": purges,
        "changes": AuditEvent.objects.filter(workspace=workspace).order_by("-created_at", "-id")[
            :LATEST_CHANGES
        ],
    }
    return render(request, "panel/overview.html", context)
