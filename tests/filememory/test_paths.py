"""Path safety of file paths (what the REST views and the tools share)."""

from __future__ import annotations

import pytest

from filememory.services.paths import clean_folder, clean_path
from memoryhub.errors import ApiError


@pytest.mark.parametrize(
    "path", ["a.md", "notes/todo.md", "a b/c d.md", "çay/şeker.md", ".hidden", "a..b", "..a"]
)
def test_clean_paths_pass(path):
    assert clean_path(path) == path


@pytest.mark.parametrize(
    "path, words",
    [
        ("", "empty"),
        (None, "string"),
        (3, "string"),
        ("/abs.md", "relative"),
        ("a\\b", "backslash"),
        ("a\x00b", "control"),
        ("a\x1fb", "control"),
        ("a\x7fb", "control"),
        ("a\x85b", "control"),
        ("a//b", "empty segments"),
        ("a/", "empty segments"),
        ("..", "'..'"),
        ("a/../b", "'..'"),
        ("./a", "'..'"),
        ("a\ud800", "Unicode"),
        ("x" * 256, "255 bytes"),
        ("/".join(["x" * 200] * 6), "1024 bytes"),
    ],
)
def test_unsafe_paths_are_422(path, words):
    with pytest.raises(ApiError) as caught:
        clean_path(path)
    assert caught.value.status == 422
    assert words in caught.value.message


def test_folders():
    assert clean_folder("") == "" and clean_folder("/") == ""
    assert clean_folder("notes") == "notes/" and clean_folder("notes/") == "notes/"
    with pytest.raises(ApiError):
        clean_folder("../notes")
