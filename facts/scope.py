"""Which facts memory a principal works on, and which of its facts it may see.

A run works on its agent's memory, or, for an eval run, on the temporary memory of its
eval root run; it sees the facts outside users' folders and those of its own end user.
Staff (API keys) name an agent of their workspace and see its real memory, every end
user's folder included, never an eval's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from django.db.models import Q, QuerySet

from facts.models import Fact
from facts.paths import Folder, Viewer
from facts.terms import Memory
from memoryhub.errors import ApiError
from memoryhub.models import Agent, Run
from memoryhub.principals import Principal

REAL_MEMORY = ""


@dataclass(frozen=True)
class FactScope:
    workspace_id: str
    agent_id: str
    scope: str  # REAL_MEMORY, or the eval root run's id
    viewer: Viewer
    run: Run | None = None

    def facts(self) -> QuerySet[Fact]:
        """Every fact this caller may see (without the search columns nobody reads back)."""
        viewer = self.viewer
        return _visible(
            self.workspace_id, self.agent_id, self.scope, viewer.is_run, viewer.end_user_id
        ).all()

    def facts_by_owner(self, folders: list[Folder]) -> list[QuerySet[Fact]] | None:
        """A run's facts under ``folders``, one queryset per owner whose facts they can hold:
        the shared facts, its own folder's. Each is one range of ``fact_owner_newest``, with
        no condition on the other owner (the planner would misjudge it). None for staff."""
        if not self.viewer.is_run:
            return None
        every, parts = _memory(self.workspace_id, self.agent_id, self.scope), []
        if any(folder.owner_id is None for folder in folders):  # outside users' folders
            parts.append(every.filter(owner_id__isnull=True))
        if self.viewer.end_user_id and any(f.path == "" or f.in_users for f in folders):
            parts.append(every.filter(owner_id=self.viewer.end_user_id))
        return [under(part, folders) for part in parts]

    @property
    def memory(self) -> Memory:
        """The memory this scope reads and writes: its counter and statistics."""
        return Memory(self.agent_id, self.scope)

    def statistics_owners(self) -> list[str] | None:
        """Whose facts weigh the search's words: the ones this caller may see (None: all).

        A run's scores then never depend on another end user's private facts.
        """
        if not self.viewer.is_run:
            return None
        return ["", self.viewer.end_user_id] if self.viewer.end_user_id else [""]


def _memory(workspace_id: str, agent_id: str, scope: str) -> QuerySet[Fact]:
    return Fact.objects.defer("search_text", "search_vector").filter(
        workspace_id=workspace_id, agent_id=agent_id, scope=scope
    )


@lru_cache(maxsize=4096)
def _visible(
    workspace_id: str, agent_id: str, scope: str, is_run: bool, end_user_id: str | None
) -> QuerySet[Fact]:
    """A caller's facts, built once for each view of a memory: building the queryset costs
    0.2 ms, a request's copy of it (``facts()``) 4 µs. Never evaluated itself."""
    visible = Q()
    if is_run:
        visible = Q(owner_id__isnull=True) | Q(owner_id=end_user_id)
    return _memory(workspace_id, agent_id, scope).filter(visible)


def eval_scope_of(run: Run) -> str:
    """The temporary memory an eval run shares with its eval tree (REAL_MEMORY otherwise)."""
    if not run.is_eval:
        return REAL_MEMORY
    return run.eval_root_id or run.id


def for_run(principal: Principal) -> FactScope:
    run = principal.run
    if run is None:
        raise ApiError(401, "a run token is required", headers={"WWW-Authenticate": "Bearer"})
    end_user = run.end_user
    viewer = Viewer(
        is_run=True,
        end_user_id=end_user.id if end_user else None,
        end_user_external_id=end_user.external_id if end_user else None,
    )
    return FactScope(principal.workspace_id, run.agent_id, eval_scope_of(run), viewer, run)


def for_staff(principal: Principal, agent_id: str) -> FactScope:
    if not Agent.objects.filter(workspace_id=principal.workspace_id, pk=agent_id).exists():
        raise ApiError(404, "agent not found")
    return FactScope(principal.workspace_id, agent_id, REAL_MEMORY, Viewer(is_run=False))


def under(facts: QuerySet[Fact], folders: list[Folder]) -> QuerySet[Fact]:
    """Facts in any of the folders or their sub-folders (whole segments only)."""
    if any(folder.path == "" for folder in folders):
        return facts
    condition = Q()
    for folder in folders:
        condition |= Q(path__startswith=folder.path)
    return facts.filter(condition)


def is_under(path: str, folders: list[Folder]) -> bool:
    return any(path.startswith(folder.path) for folder in folders)
