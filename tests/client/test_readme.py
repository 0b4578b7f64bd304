"""The README's "Use it from agent code" runs as written against a live server."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(settings.BASE_DIR) / "README.md"
SECTION = "## Use it from agent code\n"


def blocks(language: str) -> list[str]:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def test_the_install_line_names_the_client_distribution():
    [install] = blocks("sh")
    command = shlex.split(install)
    assert command[:2] == ["pip", "install"]
    assert (Path(settings.BASE_DIR) / command[2] / "pyproject.toml").is_file()


def test_the_python_blocks_run_as_written(live_server, api_key, monkeypatch, capsys):
    monkeypatch.setenv("MEMORYHUB_URL", live_server.url)
    monkeypatch.setenv("MEMORYHUB_API_KEY", api_key)
    namespace: dict = {"__name__": "readme"}
    code = blocks("python")
    assert len(code) == 6
    for number, block in enumerate(code, 1):
        exec(compile(block, f"README.md, python block {number}", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "alice Which drink do I like?",
        "users/alice/ 1 code",
        "['Alice drinks green tea']",
        "[2, 1]",
        "1 None",
        "['search_memory', 'save_memory', 'forget_memory']",
        "From memory: Alice drinks green tea",
        "403 forbidden other_user",
        "401 run_ended",
        "True True alice {'message': 'Hello again'}",
        "['save_memory', 'forget_memory']",
    ]
    for inv in ("inv", "accepted", "worker", "hub"):
        namespace[inv].close()
