from django.contrib import admin

from memoryhub import models


@admin.register(models.Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "created_at")
    search_fields = ("id", "name")


@admin.register(models.ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "name", "permission", "last_used_at", "revoked_at")
    list_filter = ("permission",)
    readonly_fields = ("secret_hash", "last_used_at")


@admin.register(models.Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "name", "created_at")
    search_fields = ("id", "name")


@admin.register(models.EndUser)
class EndUserAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "external_id", "created_at")
    search_fields = ("external_id",)


@admin.register(models.Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "agent", "end_user", "status", "created_at")
    list_filter = ("status",)


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "agent", "thread", "status", "is_eval", "created_at")
    list_filter = ("status", "is_eval")
    exclude = ("token_hash",)


@admin.register(models.MemoryProvider)
class MemoryProviderAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "type", "name", "enabled")
    exclude = ("credential_encrypted",)


@admin.register(models.Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "kind", "type", "name", "created_at")
    list_filter = ("kind", "type")


@admin.register(models.AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = (
        "created_at",
        "workspace",
        "principal_id",
        "action",
        "object_type",
        "object_id",
        "request_id",
    )
    list_filter = ("action", "object_type")

    def has_change_permission(self, request, obj=None) -> bool:
        return False
