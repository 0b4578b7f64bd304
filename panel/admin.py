from django.contrib import admin

from panel.models import Membership
from panel.views.base import AdminLoginForm


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Who of the staff sees which workspace in the panel, and with which role."""

    list_display = ("user", "workspace", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("user__username", "workspace__name", "workspace__id")
    autocomplete_fields = ("user",)
    raw_id_fields = ("workspace",)


# The admin's login page is another door to the same accounts: the same count of attempts.
admin.site.login_form = AdminLoginForm
