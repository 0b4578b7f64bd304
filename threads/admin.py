"""The admin of threads and runs (shared models whose rules live in this app's services).

Both are read-only: a run's status, token hash and workspace, a thread's end user and
mounts change only through the services, here as the actions "end" and "archive".
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from memoryhub.admin import ServiceAdmin, confirmation_notes
from memoryhub.models import Memory, Run, Thread
from threads.models import RunMount, ThreadMount
from threads.services.runs import end_run
from threads.services.threads import archive_thread


@confirmation_notes(Memory)
def _mounts(memory: Memory) -> list[str]:
    count = ThreadMount.objects.filter(memory=memory).count()
    return [f"Thread mounts removed: {count}"] if count else []


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class ThreadMountInline(ReadOnlyInline):
    model = ThreadMount
    fields = readonly_fields = ("name", "memory", "access", "recall", "created_at")


class RunMountInline(ReadOnlyInline):
    model = RunMount
    fields = readonly_fields = ("name", "memory_id", "kind", "access", "recall")


@admin.register(Thread)
class ThreadAdmin(ServiceAdmin):
    view_only = True
    list_display = ("id", "agent", "end_user", "status", "workspace", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "agent__id", "agent__name", "end_user__external_id")
    list_select_related = ("workspace", "agent", "end_user")
    ordering = ("-created_at",)
    inlines = (ThreadMountInline,)
    actions = ("archive_threads",)

    def has_archive_permission(self, request: HttpRequest) -> bool:
        return self.has_model_permission(request, "change")

    @admin.action(permissions=["archive"], description="Archive selected threads")
    def archive_threads(self, request: HttpRequest, queryset) -> HttpResponse | None:
        return self.confirmed_action(
            request,
            queryset.select_related("workspace"),
            name="archive_threads",
            title="Archive threads",
            question="Archived threads accept no more runs and lose their memory mounts.",
            perform=lambda t: archive_thread(self.principal(request, t), t.pk, None),
            done="Archived {count} threads.",
            notes=lambda t: [f"Status: {t.status}", f"Mounts removed: {t.mounts.count()}"],
        )


@admin.register(Run)
class RunAdmin(ServiceAdmin):
    view_only = True
    list_display = (
        "id",
        "agent",
        "thread",
        "end_user",
        "status",
        "is_eval",
        "workspace",
        "created_at",
        "ended_at",
    )
    list_filter = ("status", "is_eval", "inline")
    search_fields = ("id", "thread__id", "agent__id", "agent__name", "end_user__external_id")
    list_select_related = ("workspace", "agent", "thread", "end_user")
    ordering = ("-created_at",)
    exclude = ("token_hash",)
    inlines = (RunMountInline,)
    actions = ("end_runs",)

    def has_end_permission(self, request: HttpRequest) -> bool:
        return self.has_model_permission(request, "change")

    @admin.action(permissions=["end"], description="End selected runs")
    def end_runs(self, request: HttpRequest, queryset) -> HttpResponse | None:
        return self.confirmed_action(
            request,
            queryset.select_related("workspace"),
            name="end_runs",
            title="End runs",
            question="Ended runs' tokens can only read from then on; a run cannot be restarted.",
            perform=lambda run: end_run(self.principal(request, run), run.pk),
            done="Ended {count} runs.",
            notes=lambda run: [f"Status: {run.status}", f"Eval: {'yes' if run.is_eval else 'no'}"],
        )
