"""Reading facts: get, versions, list (newest first, keyset pages) and search."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from facts import paths, search, validation
from facts.models import FACT_ID_PREFIX, Fact, FactVersion
from facts.paths import Folder
from facts.scope import FactScope, under
from memoryhub.errors import ApiError

# Ids are random: they only break ties of updated_at, but as a total order, so that the
# ``before`` keyset (_older_than) pages exactly, whatever many facts share one moment.
NEWEST_FIRST = ("-updated_at", "-id")


@dataclass
class Page:
    facts: list[Fact]
    next: str | None  # the fact id to pass as ``before`` for the next page


def get_fact(scope: FactScope, fact_id: str) -> Fact:
    fact = scope.facts().filter(pk=_pk_or_404(fact_id)).first()
    if fact is None:
        raise ApiError(404, "fact not found")
    return fact


def versions_of(scope: FactScope, fact: Fact) -> QuerySet[FactVersion]:
    """A fact's versions, newest first, as a query (the fact was found in ``scope``)."""
    return FactVersion.objects.filter(
        workspace_id=scope.workspace_id, agent_id=scope.agent_id, fact_id=fact.pk
    ).order_by("-version")


def fact_versions(scope: FactScope, fact_id: str) -> tuple[Fact, list[FactVersion]]:
    """Every version of a fact, newest first."""
    fact = get_fact(scope, fact_id)
    return fact, list(versions_of(scope, fact))


def list_facts(
    scope: FactScope,
    *,
    path: str = "",
    tags: list[str] | None = None,
    limit: int = validation.LIMIT_DEFAULT,
    before: int | None = None,
) -> Page:
    """One page of facts under ``path``, newest first; ``before`` is a fact's pk (cursor)."""
    folder = paths.resolve(path, scope.viewer)
    facts = _with_tags(under(scope.facts(), [folder]), tags)
    if before is not None:
        facts = facts.filter(_older_than(scope, before))
    rows = list(facts.order_by(*NEWEST_FIRST)[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, rows[-1].public_id if has_more else None)


def search_facts(
    scope: FactScope,
    query: str,
    *,
    folders: list[Folder],
    tags: list[str] | None = None,
    k: int = validation.K_DEFAULT,
) -> list[Fact]:
    """The best ``k`` matches, or the newest ``k`` facts for an empty query."""
    facts = _with_tags(under(scope.facts(), folders), tags)
    if not query.strip():
        return list(facts.order_by(*NEWEST_FIRST)[:k])

    def by_owner() -> list[QuerySet[Fact]] | None:  # built only when the search needs it
        parts = scope.facts_by_owner(folders)
        return None if parts is None else [_with_tags(part, tags) for part in parts]

    return search.ranked(facts, query, k, scope.statistics_owners(), by_owner)


def _with_tags(facts: QuerySet[Fact], tags: list[str] | None) -> QuerySet[Fact]:
    return facts.filter(tags__contains=tags) if tags else facts


def _older_than(scope: FactScope, pk: int) -> Q:
    cursor = scope.facts().filter(pk=pk).values("updated_at").first()
    if cursor is None:
        raise ApiError(422, f"before names no fact of this memory ({FACT_ID_PREFIX}… ids only)")
    moment = cursor["updated_at"]
    return Q(updated_at__lt=moment) | Q(updated_at=moment, id__lt=pk)


def _pk_or_404(fact_id: str) -> int:
    try:
        return validation.fact_pk(fact_id)
    except ApiError:
        raise ApiError(404, "fact not found") from None
