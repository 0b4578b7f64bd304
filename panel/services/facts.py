"""What the panel shows of an agent's facts beyond the API's answers: the folder tree."""

from __future__ import annotations

from django.db.models import Count

from facts.scope import FactScope
from panel import trees
from panel.trees import FolderRow


def folder_tree(scope: FactScope) -> tuple[list[FolderRow], bool]:
    """The tree of folders holding facts, counted; one query, grouped by path."""
    rows = scope.facts().values("path").annotate(n=Count("id")).order_by()
    return trees.folder_tree((row["path"], row["n"]) for row in rows)
