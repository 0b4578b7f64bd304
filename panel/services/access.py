"""Who sees what in the panel: a staff user's seat in a workspace.

A member of a workspace acts there with their role (``viewer`` reads, ``editor`` also
corrects, ``admin`` also erases people and purges history); a superuser is an admin of
every workspace. Anything of a workspace the user is no member of is 404, as in the API.
The services see the user as a staff principal (``Principal.for_staff``) with the API
permission of the role, so they check and audit it like any API call.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import Http404

from memoryhub.models import Permission, Workspace
from memoryhub.principals import Principal
from panel.models import Membership, Role

LEVELS = {Role.VIEWER: 1, Role.EDITOR: 2, Role.ADMIN: 3}
PERMISSIONS = {
    Role.VIEWER: Permission.READ,
    Role.EDITOR: Permission.WRITE,
    Role.ADMIN: Permission.WRITE,
}


@dataclass(frozen=True)
class Seat:
    """A staff user in one workspace: the role, and the principal the services see."""

    workspace: Workspace
    role: Role
    principal: Principal

    def can(self, role: Role) -> bool:
        return LEVELS[self.role] >= LEVELS[role]

    def require(self, role: Role) -> None:
        """403 for a page or action above the user's role."""
        if not self.can(role):
            raise PermissionDenied(f"this needs the {role} role")


def workspaces_of(user: User | AnonymousUser) -> list[tuple[Workspace, Role]]:
    """The workspaces a user may open, by name, each with the user's role there."""
    if not user.is_authenticated:  # (panel pages let no one else in)
        return []
    if user.is_superuser:
        return [(w, Role.ADMIN) for w in Workspace.objects.order_by("name", "id")]
    memberships = Membership.objects.filter(user=user).select_related("workspace")
    found = [(m.workspace, Role(m.role)) for m in memberships]
    return sorted(found, key=lambda pair: (pair[0].name, pair[0].id))


def seat(user: User | AnonymousUser, workspace_id: str) -> Seat:
    """The user's seat in a workspace; 404 where the user is no member."""
    if not user.is_authenticated:  # a member of no workspace (panel pages let no one in)
        raise Http404("no such workspace")
    if user.is_superuser:
        workspace = Workspace.objects.filter(pk=workspace_id).first()
        role = Role.ADMIN
    else:
        membership = (
            Membership.objects.select_related("workspace")
            .filter(user=user, workspace_id=workspace_id)
            .first()
        )
        workspace = membership.workspace if membership else None
        role = Role(membership.role) if membership else Role.VIEWER
    if workspace is None:
        raise Http404("no such workspace")
    principal = Principal.for_staff(workspace, user.get_username(), PERMISSIONS[role])
    return Seat(workspace, role, principal)
