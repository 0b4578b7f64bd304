"""What the panel shows of an agent's facts beyond the API's answers: the folder tree, and a
fact's versions a page at a time."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count

from facts.models import Fact, FactVersion
from facts.scope import FactScope
from facts.services.reading import versions_of
from panel import trees
from panel.trees import FolderRow

# Versions are unlimited (every ``replaces`` adds one): the fact page shows this many, with
# their diffs, and pages to the older ones like a file's history.
VERSIONS_PER_PAGE = 20


def folder_tree(scope: FactScope) -> tuple[list[FolderRow], bool]:
    """The tree of folders holding facts, counted; one query, grouped by path."""
    rows = scope.facts().values("path").annotate(n=Count("id")).order_by()
    return trees.folder_tree((row["path"], row["n"]) for row in rows)


@dataclass(frozen=True)
class VersionsPage:
    page: Page  # its versions, newest first; page.paginator.count counts them all
    older: FactVersion | None  # the version just older than the page, for its last diff


def versions_page(scope: FactScope, fact: Fact, number: int | str | None) -> VersionsPage:
    """One page of a fact's versions, sliced in the database (a count, the page, and the one
    version before it: three queries whatever the history holds). A page number past the end
    shows the last page and one that is no number the first, as a file's history does."""
    versions = versions_of(scope, fact)
    page = Paginator(versions, VERSIONS_PER_PAGE).get_page(number)
    page.object_list = list(page.object_list)
    older = None
    if page.object_list:
        older = versions.filter(version__lt=page.object_list[-1].version).first()
    return VersionsPage(page, older)
