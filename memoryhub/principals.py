"""Who acts: an API key, a run (through its run token) or a staff user in the panel."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from memoryhub import ids
from memoryhub.errors import ApiError
from memoryhub.models import PERMISSION_LEVELS, ApiKey, Permission, Run, Workspace
from memoryhub.reasons import Code, Reason


@dataclass
class Principal:
    workspace: Workspace
    kind: str  # "api_key", "run" or "staff"
    id: str
    permission: str
    run: Run | None = None
    api_key: ApiKey | None = None
    username: str = ""
    extra: dict = field(default_factory=dict)

    # DRF and Django look at these on request.user.
    is_authenticated = True
    is_anonymous = False

    @property
    def workspace_id(self) -> str:
        return self.workspace.id

    def has(self, permission: str) -> bool:
        return PERMISSION_LEVELS[self.effective_permission] >= PERMISSION_LEVELS[permission]

    @property
    def effective_permission(self) -> str:
        # An ended run's token can still read, never change anything.
        if self.run is not None and not self.run.is_running:
            return Permission.READ
        return self.permission

    def require(self, permission: str) -> None:
        """Refuse an action that needs more than this principal holds."""
        if self.has(permission):
            return
        if self.run is not None and not self.run.is_running:
            raise ApiError(401, "the run has ended", reason=Reason.RUN_ENDED)
        raise ApiError(403, f"this needs the {permission} permission", code=Code.FORBIDDEN)

    @classmethod
    def for_api_key(cls, key: ApiKey) -> Principal:
        return cls(key.workspace, "api_key", key.id, key.permission, api_key=key)

    @classmethod
    def for_run(cls, run: Run) -> Principal:
        return cls(run.workspace, "run", run.id, Permission.RUN, run=run)

    @classmethod
    def for_staff(
        cls, workspace: Workspace, username: str, permission: str = Permission.WRITE
    ) -> Principal:
        """A staff user in the admin or the panel (the panel gives the role's permission)."""
        return cls(workspace, "staff", STAFF_PREFIX + username, permission, username=username)

    @classmethod
    def system(cls, workspace: Workspace) -> Principal:
        """Operators' commands and background tasks."""
        return cls(workspace, "system", "system", Permission.WRITE)


# The prefix of the id each kind of principal has (staff: user:<username>, system: system).
_ID_PREFIXES = {"api_key": "key", "run": "run"}
STAFF_PREFIX = "user:"


def is_principal_id(kind: str, value: str) -> bool:
    """Whether ``value`` is an id a principal of ``kind`` has, as the constructors above write
    it. The principal need not exist here: history moved from another installation names
    keys, runs and staff this one never had, but never in another shape."""
    if kind in _ID_PREFIXES:
        return ids.is_well_formed(value, _ID_PREFIXES[kind])
    if kind == "staff":
        username = value.removeprefix(STAFF_PREFIX)
        if username == value or not username:
            return False
        try:
            get_user_model()._meta.get_field("username").run_validators(username)
        except ValidationError:
            return False
        return True
    return kind == "system" and value == "system"
