"""Query parameters of the file memory's lists: a folder of files, one path's history."""

from __future__ import annotations

from filememory.services.paths import FILE_PATH, PREFIX
from memoryhub.filters import FilterSet, RuleFilter


class FileFilter(FilterSet):
    # "" and "/" (the root) are every file: an empty value filters nothing.
    prefix = RuleFilter(
        PREFIX,
        field_name="path",
        lookup_expr="startswith",
        help_text="Only the files under this folder, such as prefs/ ('' or / for all); the "
        "folder follows the rules of file paths.",
    )


class RevisionFilter(FilterSet):
    path = RuleFilter(FILE_PATH, field_name="path", help_text="Only this file path's revisions.")
