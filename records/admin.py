"""The admin of memory providers and purge jobs (their rules live in this app's services).

Providers change only through ``records.services.providers`` and never show or take a
credential (set it through the API); purge jobs are read-only, with a "retry" action.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from memoryhub import audit
from memoryhub.admin import ServiceAdmin, adopt, changed_fields, confirmation_notes
from memoryhub.models import Memory, MemoryProvider
from memoryhub.rules import parse
from records.models import ProviderOutage, PurgeAttempt, PurgeJob
from records.serializers import MemoryProviderChangeSerializer
from records.services import providers, purges


@confirmation_notes(Memory)
def _records(memory: Memory) -> list[str]:
    if memory.kind != Memory.Kind.RECORD or not memory.namespace:
        return []
    return [
        f"Its records in namespace {memory.namespace} will be purged from the backend of "
        f"{memory.provider} (a purge job, retried until it succeeds or gives up)."
    ]


@admin.register(MemoryProvider)
class MemoryProviderAdmin(ServiceAdmin):
    list_display = ("name", "id", "type", "workspace", "base_url", "enabled", "created_at")
    list_filter = ("type", "enabled")
    search_fields = ("id", "name", "workspace__id", "workspace__name")
    list_select_related = ("workspace",)
    ordering = ("-created_at",)
    # Never the credential: not shown, not taken.
    fields = ("id", "workspace", "type", "name", "config", "enabled", "version", "created_at")
    readonly_fields = ("id", "workspace", "type", "version", "created_at")
    optional_fields = {"config": {}}  # the service decides what an empty config means
    delete_question = "These memory providers will be deleted (only when nothing uses them):"

    @admin.display(description="base URL")
    def base_url(self, provider: MemoryProvider) -> str:
        return provider.config.get("base_url", "")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a provider needs a credential, which the admin never takes: use the API

    def save_model(self, request, obj, form, change) -> None:
        if data := changed_fields(form, self.optional_fields):
            changes = parse(MemoryProviderChangeSerializer, data)  # the API's rules
            principal = self.principal(request, obj)
            adopt(obj, providers.update_provider(principal, obj.pk, "*", **changes))

    def service_delete(self, request, obj) -> None:
        providers.delete_provider(self.principal(request, obj), obj.pk, "*")

    def delete_notes(self, provider: MemoryProvider) -> list[str]:
        pending = provider.purge_jobs.filter(status=PurgeJob.Status.PENDING).count()
        memories = provider.memories.count()
        return [f"Record memories using it: {memories}", f"Pending purges: {pending}"]


class PurgeAttemptInline(admin.TabularInline):
    model = PurgeAttempt
    extra = 0
    can_delete = False
    fields = readonly_fields = ("number", "ok", "error", "created_at")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PurgeJob)
class PurgeJobAdmin(ServiceAdmin):
    """Where staff see each purge, its tries and their errors, and start a failed one over."""

    view_only = True
    list_display = (
        "id",
        "memory_name",
        "namespace",
        "provider",
        "workspace",
        "status",
        "attempts",
        "next_attempt_at",
        "updated_at",
    )
    list_filter = ("status",)
    search_fields = ("id", "namespace", "memory_id", "memory_name")
    list_select_related = ("workspace", "provider")
    ordering = ("-created_at",)
    inlines = (PurgeAttemptInline,)
    actions = ("retry_purges",)

    def has_retry_permission(self, request: HttpRequest) -> bool:
        return self.has_model_permission(request, "change")

    @admin.action(permissions=["retry"], description="Retry selected purges")
    def retry_purges(self, request: HttpRequest, queryset) -> None:
        def retry(job: PurgeJob) -> None:
            purges.retry(job.pk)
            audit.record(self.principal(request, job), "purge.retry", "purge", job.pk)

        self.each(request, queryset.select_related("workspace"), retry, "Retrying {count} purges.")


@admin.register(ProviderOutage)
class ProviderOutageAdmin(ServiceAdmin):
    """Which providers failed their last call (what ``/healthz`` counts, here by name)."""

    view_only = True
    list_display = ("provider_name", "workspace", "reason", "last_failed_at")
    list_select_related = ("provider__workspace",)
    search_fields = ("provider__id", "provider__name", "provider__workspace__name")
    ordering = ("-last_failed_at",)

    @admin.display(description="provider", ordering="provider__name")
    def provider_name(self, outage: ProviderOutage) -> str:
        return outage.provider.name

    @admin.display(ordering="provider__workspace__name")
    def workspace(self, outage: ProviderOutage) -> str:
        return outage.provider.workspace.name
