from django.contrib import admin

from records.models import PurgeAttempt, PurgeJob


class PurgeAttemptInline(admin.TabularInline):
    model = PurgeAttempt
    extra = 0
    can_delete = False
    readonly_fields = ("number", "ok", "error", "created_at")


@admin.register(PurgeJob)
class PurgeJobAdmin(admin.ModelAdmin):
    """Where staff see each purge, its tries and their errors."""

    list_display = ("id", "workspace", "provider", "namespace", "status", "attempts", "updated_at")
    list_filter = ("status",)
    search_fields = ("id", "namespace", "memory_id")
    readonly_fields = [f.name for f in PurgeJob._meta.fields]
    inlines = [PurgeAttemptInline]
