"""The README and the docs say what is true: every block runs as written or is checked, the
site builds with ``--strict``, and the README stays a front door.

How each kind of block is held to what it says (tests/documented.py reads them):

* ``python``: run, one page at a time in one namespace, against a live server; the comment
  after each ``print`` is what it must print (``...`` for any text).
* ``sh`` with ``curl``: run in bash against a live server (``MEMORYHUB_URL``,
  ``MEMORYHUB_API_KEY``). Other ``sh`` commands are checked: ``manage.py`` commands exist
  and take their arguments, ``make`` targets and the variables given them exist, the
  modules a server command names exist, paths exist.
* ``console``: each ``$ manage.py ...`` line runs against the test database seeded with
  ``make run``'s demo, and prints what the page shows (ids and times aside; an id the page
  shows is the one printed before it).
* ``json``: parses. ``text``: not code.
* A block marked ``<!-- docs-test: skip: reason -->`` is not run; it must give a reason.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path
from xml.etree import ElementTree

import pytest
import requests
from django.core.management import get_commands, load_command_class
from django.db import connection

from memoryhub.client import Invocation, MemoryHub
from memoryhub.embedded import free_port
from memoryhub.services.workspaces import create_api_key, create_workspace
from tests.documented import (
    DOCS,
    MARKER,
    README,
    ROOT,
    Block,
    all_blocks,
    blocks,
    commands,
    matches,
    pages,
    printed,
)

LANGUAGES = {"python", "sh", "console", "json", "text"}
MAKEFILE = (ROOT / "Makefile").read_text()
TARGETS = set(re.findall(r"^([A-Za-z][\w-]*):", MAKEFILE, flags=re.M))
WRITTEN_BY_RUNS = {"bench/results.json"}  # what make bench writes, named before it exists
OUR_APPS = ("memoryhub", "hub", "facts", "filememory", "records", "threads", "panel")


def _id(block: Block) -> str:
    return str(block)


def runnable(language: str) -> list[Block]:
    return [block for block in all_blocks(language) if block.skip is None]


def curl_blocks() -> list[Block]:
    return [block for block in runnable("sh") if any(w[0] == "curl" for w in commands(block))]


def checked_blocks() -> list[Block]:
    return [block for block in runnable("sh") if block not in curl_blocks()]


# -- the README and the site ---------------------------------------------------------------


def test_the_readme_is_a_front_door_of_at_most_300_lines():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    # No benchmark figures and no commit hashes: those live in docs/performance.md, if anywhere.
    assert not re.findall(r"\d ms\b", text)
    assert not [
        w
        for w in re.findall(r"\b[0-9a-f]{7,40}\b", text)
        if re.search(r"[a-f]", w) and re.search(r"\d", w)
    ]


def test_the_site_builds_with_strict(tmp_path):
    """``make docs``: a broken link or anchor, or a page left out of nav, fails the build."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "index.html").is_file()
    assert (tmp_path / "overview.svg").is_file()


def test_every_page_is_in_the_navigation_and_every_link_of_the_readme_leads_somewhere():
    navigation = (ROOT / "mkdocs.yml").read_text()
    for page in sorted(DOCS.glob("**/*.md")):
        assert f": {page.relative_to(DOCS)}" in navigation, page
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text()):
        if not re.match(r"[a-z]+:", target):
            assert (ROOT / target).exists(), target


def test_the_picture_is_an_svg():
    root = ElementTree.parse(DOCS / "overview.svg").getroot()  # noqa: S314 - our own file
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "docs/overview.svg" in README.read_text()


def test_every_block_has_a_language_the_test_knows_and_every_marker_is_read():
    for page in pages():
        found = blocks(page)
        for block in found:
            assert block.language in LANGUAGES, block
        markers = len(MARKER.findall(page.read_text()))
        assert markers == sum(block.skip is not None for block in found), page


def test_the_files_the_docs_name_exist():
    """Paths in backticks, such as `facts/topk.py`: code moves, and the docs follow it."""
    named = re.compile(
        r"`((?:memoryhub|hub|facts|filememory|records|threads|panel|tests|bench|deploy|support"
        r"|docs|templates)/[\w./-]*)`"
    )
    for page in pages():
        for path in set(named.findall(page.read_text())) - WRITTEN_BY_RUNS:
            assert (ROOT / path).exists(), f"{page.relative_to(ROOT)} names {path}"


def test_every_command_of_the_project_has_its_section_in_operations():
    ours = {name for name, app in get_commands().items() if app.split(".")[0] in OUR_APPS}
    text = (DOCS / "operations.md").read_text()
    documented = set(re.findall(r"^### (\w+)$", text, flags=re.M))
    documented |= set(re.findall(r"^\| `(\w+)", text, flags=re.M))
    assert ours <= documented, ours - documented


def test_every_setting_read_from_the_environment_is_in_the_reference():
    sources = [ROOT / "memoryhub" / "settings.py", ROOT / "memoryhub" / "embedded.py"]
    sources += list((ROOT / "hub").glob("**/*.py"))
    names = set()
    for source in sources:
        text = source.read_text()
        names |= set(re.findall(r"\benv\(\s*\"([A-Z][A-Z0-9_]+)\"", text))
        names |= set(re.findall(r"environ\.get\(\s*\"(MEMORYHUB_[A-Z0-9_]+)\"", text))
    reference = (DOCS / "deployment.md").read_text()
    assert names and not {n for n in names if f"`{n}`" not in reference}


# -- blocks that are checked ---------------------------------------------------------------


@pytest.mark.parametrize("block", all_blocks("json"), ids=_id)
def test_json_blocks_parse_and_mcp_configurations_name_what_exists(block, monkeypatch):
    document = json.loads(block.text)
    for server in document.get("mcpServers", {}).values() if isinstance(document, dict) else ():
        if "command" in server:  # memoryhub-mcp, its options and its environment
            assert Path(server["command"]).name == "memoryhub-mcp"
            assert "\nmemoryhub-mcp = " in (ROOT / "pyproject.toml").read_text()
            _check_argparse("hub.mcp.stdio", server.get("args", []), monkeypatch)
            for name in server.get("env", {}):
                assert _read_somewhere(name), f"{name} is read nowhere"
        else:  # over HTTP: /mcp, with headers the server reads
            assert server["url"].endswith("/mcp")
            for name in server.get("headers", {}):
                assert name == "Authorization" or _read_somewhere(name.lower()), name


@pytest.mark.parametrize("block", checked_blocks() + runnable("console"), ids=_id)
def test_commands_are_as_the_project_takes_them(block, monkeypatch):
    for words in commands(block):
        check(words, monkeypatch)


def check(words: list[str], monkeypatch) -> None:
    """Asserts that a documented command names what exists and takes its arguments."""
    while words and re.fullmatch(r"[A-Z][A-Z0-9_]*=.*", words[0]):
        name = words.pop(0).split("=", 1)[0]
        assert _read_somewhere(name), f"{name} is read nowhere"
    program, *args = words
    if program == "make":
        _check_make(args, monkeypatch)
    elif Path(program).name in ("python", "python3") and args[:1] == ["manage.py"]:
        _check_manage(args[1:])
    elif program == "pip" and args[:1] == ["install"]:
        assert (ROOT / args[1].split("[")[0] / "pyproject.toml").is_file(), args
    elif program == "gunicorn":
        config = args[args.index("-c") + 1]
        _check_module(config.removeprefix("python:"))
        _check_module(args[-1])
    elif program == "uvicorn":
        _check_module(args[0])
    elif program == "celery":
        assert args[0] == "-A" and args[2] in ("worker", "beat"), args
        _check_module(args[1])
    else:
        raise AssertionError(f"no check for `{shlex.join(words)}`: add one or a skip marker")


def _read_somewhere(name: str) -> bool:
    pattern = re.compile(rf"\b{name}\b")
    places = [ROOT / "Makefile", ROOT / "manage.py"]
    for folder in (*OUR_APPS, "bench", "support"):
        places += (ROOT / folder).glob("**/*.py")
    return any(pattern.search(path.read_text()) for path in places)


def _check_make(args: list[str], monkeypatch) -> None:
    variables = dict(arg.split("=", 1) for arg in args if "=" in arg)
    for target in [arg for arg in args if "=" not in arg]:
        assert target in TARGETS, f"make {target}: no such target"
    for name, value in variables.items():
        assert f"$({name})" in MAKEFILE, f"make takes no {name}"
        if name == "ARGS":
            _check_manage(shlex.split(value))
        elif name == "BENCH_ARGS":
            for module in shlex.split(value):
                assert (ROOT / "bench" / f"{module}.py").is_file(), module
        elif name == "LOAD_ARGS":
            _check_argparse("bench.load.__main__", shlex.split(value), monkeypatch)
        elif name == "PYTEST_ARGS":
            for word in shlex.split(value):
                assert word.startswith("-") or word == "not slow" or (ROOT / word).exists()


def _check_manage(args: list[str]) -> None:
    name, *rest = args
    app = get_commands().get(name)
    assert app, f"manage.py {name}: no such command"
    parser = load_command_class(app, name).create_parser("manage.py", name)
    parser.parse_args(rest)  # a CommandError names what it does not take


def _check_module(target: str) -> None:
    module, _, attribute = target.partition(":")
    assert importlib.util.find_spec(module), f"no module {module}"
    if attribute:
        source = Path(importlib.util.find_spec(module).origin).read_text()
        defined = rf"^(?:async def |def |class )?{attribute}\b"
        assert re.search(defined, source, flags=re.M), target


class _Parsed(Exception):
    pass


def _check_argparse(module: str, argv: list[str], monkeypatch) -> None:
    """Runs ``module``'s argument parser on ``argv`` and stops before it does anything."""
    real = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        real(self, args, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [module, *argv])
    with pytest.raises(_Parsed):
        runpy.run_module(module, run_name="__main__")


# -- blocks that run -----------------------------------------------------------------------


@pytest.fixture
def api_key(transactional_db) -> str:
    return create_api_key(create_workspace("Docs"), "write")[1]


@pytest.fixture
def served(live_server, api_key, monkeypatch) -> dict[str, str]:
    """A live server, and the environment a reader sets up for the examples."""
    environ = {"MEMORYHUB_URL": live_server.url, "MEMORYHUB_API_KEY": api_key}
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return environ


@pytest.mark.parametrize("block", curl_blocks(), ids=_id)
def test_curl_blocks_run_as_written(block, served):
    done = subprocess.run(  # noqa: S603 - the block is ours
        ["bash", "-euo", "pipefail", "-c", block.text],
        env={**os.environ, **served},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def python_pages(*, mcp: bool) -> list[Path]:
    return sorted(
        {block.page for block in runnable("python") if (block.page.name == "mcp.md") == mcp}
    )


def run_python(page: Path, namespace: dict, capsys) -> None:
    code = [block for block in blocks(page) if block.language == "python" and not block.skip]
    expected = []
    try:
        for block in code:
            where = f"{block.page.relative_to(ROOT)}, the block at line {block.line}"
            exec(compile(block.text, where, "exec"), namespace)  # noqa: S102 - our docs
            expected += printed(block.text)
    finally:
        for value in namespace.values():  # a kept-alive connection holds a server thread
            if isinstance(value, MemoryHub | Invocation):
                value.close()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(expected), (lines, expected)
    for want, got in zip(expected, lines, strict=True):
        assert matches(want, got), (want, got)


@pytest.mark.parametrize("page", python_pages(mcp=False), ids=lambda p: p.name)
def test_python_blocks_run_as_written(page, served, capsys):
    run_python(page, {"__name__": "docs"}, capsys)


# -- MCP: a uvicorn serving hub.asgi on the test database ----------------------------------


def _database_url() -> str:
    db = connection.settings_dict
    host = (db["HOST"] or "127.0.0.1").replace("/", "%2F")
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def asgi_server(transactional_db):
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=_database_url(),
        PYTHONPATH=str(ROOT),
    )
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "uvicorn", "hub.asgi:application", "--port", str(port)]
        + ["--host", "127.0.0.1", "--log-level", "warning"],
        env=environ,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the server did not come up"
            try:
                if requests.get(url + "/healthz", timeout=10).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.slow
@pytest.mark.parametrize("page", python_pages(mcp=True), ids=lambda p: p.name)
def test_the_mcp_python_block_runs_as_written(page, asgi_server, capsys):
    key = create_api_key(create_workspace("Docs"), "write")[1]
    headers = {"Authorization": f"Bearer {key}"}

    def call(path: str, body: dict) -> dict:
        answer = requests.post(asgi_server + path, json=body, headers=headers, timeout=30)
        assert answer.status_code == 201, answer.text
        return answer.json()

    agent = call("/api/v1/agents", {"name": "Support bot"})
    thread = call("/api/v1/threads", {"agent_id": agent["id"], "end_user": "ada"})
    run = call(f"/api/v1/threads/{thread['id']}/runs", {"input": "hi"})
    namespace = {"__name__": "docs", "mcp_url": asgi_server + "/mcp", "run_token": run["token"]}
    run_python(page, namespace, capsys)


# -- console blocks: manage.py on make run's demo ------------------------------------------

ID = re.compile(
    r"\b(?:(ws|key|agt|thr|run|mem|memprov|usr|rev)_[0-9a-z]{20}|erased-[0-9a-f]{16})\b"
)
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00")


def _skeleton(line: str) -> str:
    return ID.sub(lambda m: f"<{m.group(1) or 'pseudonym'}>", TIME.sub("<time>", line))


@pytest.fixture
def demo(transactional_db, live_server, tmp_path):
    """``make run``'s demo: ``demo_setup``'s workspace, key and login, seeded over the API."""
    from django.core.management import call_command

    from memoryhub.demo import seed

    call_command("demo_setup", "--data-dir", str(tmp_path), "--json", stdout=StringIO())
    credentials = json.loads((tmp_path / "demo-credentials.json").read_text())
    seed(live_server.url, credentials["api_key"])
    return credentials


@pytest.mark.parametrize("block", runnable("console"), ids=_id)
def test_console_blocks_print_what_they_show(block, demo, tmp_path):
    environ = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "memoryhub.test_settings",
        "PYTHONPATH": str(ROOT),
    }
    shown = block.text.splitlines()
    ids: dict[str, str] = {}  # an id the page shows -> the one printed here
    starts = [n for n, line in enumerate(shown) if line.startswith("$ ")] + [len(shown)]
    for start, end in zip(starts, starts[1:], strict=False):
        words = shlex.split(ID.sub(lambda m: ids.get(m.group(0), m.group(0)), shown[start][2:]))
        assert words[1] == "manage.py", words
        done = subprocess.run(  # noqa: S603 - the page's own command
            [sys.executable, str(ROOT / "manage.py"), *words[2:]],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        expected, printed_lines = shown[start + 1 : end], done.stdout.splitlines()
        assert [_skeleton(line) for line in printed_lines] == [
            _skeleton(line) for line in expected
        ], (shown[start], done.stdout, done.stderr)
        for want, got in zip(expected, printed_lines, strict=True):
            for a, b in zip(ID.finditer(want), ID.finditer(got), strict=True):
                ids[a.group(0)] = b.group(0)
