"""What the panel shows of an agent's facts beyond the API's answers: the folder tree."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from facts.scope import FactScope

MAX_FOLDERS = 300  # rows of the tree; a memory of thousands of people's folders is cut


@dataclass(frozen=True)
class FolderRow:
    path: str  # "" for the root, else with one trailing slash
    name: str  # the last segment
    depth: int
    count: int  # facts in this folder and below


def folder_tree(scope: FactScope) -> tuple[list[FolderRow], bool]:
    """Every folder holding facts and its ancestors, with counts of all facts below; and
    whether the tree was cut at MAX_FOLDERS rows. One query, grouped by path."""
    totals: dict[str, int] = {}
    for row in scope.facts().values("path").annotate(n=Count("id")).order_by():
        path, n = row["path"], row["n"]
        segments = path.split("/")[:-1] if path else []
        totals[""] = totals.get("", 0) + n
        for end in range(1, len(segments) + 1):
            prefix = "/".join(segments[:end]) + "/"
            totals[prefix] = totals.get(prefix, 0) + n
    rows = [
        FolderRow(path, path.rstrip("/").rsplit("/", 1)[-1] or "/", path.count("/"), n)
        for path, n in sorted(totals.items())
    ]
    return rows[:MAX_FOLDERS], len(rows) > MAX_FOLDERS
