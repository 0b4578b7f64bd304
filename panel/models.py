"""Who of the staff may see which workspace in the panel, and with which role."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from memoryhub.models import Workspace


class Role(models.TextChoices):
    VIEWER = "viewer"  # reads
    EDITOR = "editor"  # also corrects: edits and forgets facts, files, records
    ADMIN = "admin"  # also erases people and purges history


class Membership(models.Model):
    """A staff user's role in one workspace (a superuser sees every workspace as admin)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="members")
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace_id} as {self.role}"
