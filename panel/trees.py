"""A memory's folder tree as the panel shows it, for facts (paths of folders) and files
(paths of files) alike: every folder with what lies below it, counted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_FOLDERS = 300  # rows of the tree; a memory of thousands of folders is cut


@dataclass(frozen=True)
class FolderRow:
    path: str  # "" for the root, else with one trailing slash
    name: str  # the last segment
    depth: int
    count: int  # items in this folder and below


def folder_tree(counts: Iterable[tuple[str, int]]) -> tuple[list[FolderRow], bool]:
    """The folders of ``(path, items at that path)`` pairs and all their ancestors, each
    with the items below it; and whether the tree was cut at MAX_FOLDERS rows. A path's
    last segment (a file's name, or the empty one after a folder's slash) is no folder."""
    totals: dict[str, int] = {}
    for path, n in counts:
        segments = path.split("/")[:-1]
        totals[""] = totals.get("", 0) + n
        for end in range(1, len(segments) + 1):
            prefix = "/".join(segments[:end]) + "/"
            totals[prefix] = totals.get(prefix, 0) + n
    rows = [
        FolderRow(path, path.rstrip("/").rsplit("/", 1)[-1] or "/", path.count("/"), n)
        for path, n in sorted(totals.items())
    ]
    return rows[:MAX_FOLDERS], len(rows) > MAX_FOLDERS
