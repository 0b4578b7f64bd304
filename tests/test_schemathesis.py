"""Schemathesis against a live gunicorn: the served schema tells the truth.

Every operation of ``/api/schema/`` is called with cases generated from the schema itself
(valid and invalid ones), on a seeded workspace, with each kind of credential: API keys of
each permission, a running run's token, an ended run's token, none. Every answer must be
no 5xx, a documented status, of the documented content type and of the documented shape
(errors included).

``MEMORYHUB_FUZZ_EXAMPLES`` (default 4) sets how many examples per operation the fuzzing
phase generates; ``make fuzz`` runs this module with many more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field

import pytest
import requests
import schemathesis
from django.conf import settings
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memoryhub.embedded import free_port
from memoryhub.services.workspaces import create_api_key, create_workspace
from support.fakes.mem0 import OssServer
from support.workers import stop, wait_until_up
from support.workers import tests_database_url as database_url

# django_db also when this module runs alone (make fuzz): only then does pytest-django make
# a test database for the seed fixture, instead of seeding and flushing DATABASE_URL's.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

EXAMPLES = int(os.environ.get("MEMORYHUB_FUZZ_EXAMPLES", "4"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
OSS_KEY = "fuzz-oss-key"
OSS_ADMIN_KEY = "fuzz-oss-admin-key"
FILE_PATH = "notes/todo.md"
SPARE_FILE_PATH = "notes/spare.md"


@dataclass
class Seed:
    """A workspace with one of everything, and the credentials to reach it."""

    url: str
    keys: dict[str, str]  # permission -> secret
    tokens: dict[str, str] = field(default_factory=dict)  # "running" / "ended" -> run token
    ids: dict[str, str] = field(default_factory=dict)  # what a path parameter may name
    statuses: Counter = field(default_factory=Counter)  # (operation, status) -> calls
    phases: Counter = field(default_factory=Counter)  # schemathesis phase -> calls
    started: float = field(default_factory=time.monotonic)

    def call(self, method: str, path: str, key: str = "write", **kwargs) -> dict:
        headers = kwargs.pop("headers", {})
        if key in self.keys:
            headers["Authorization"] = f"Bearer {self.keys[key]}"
        else:
            headers["x-agentos-run-token"] = self.tokens[key]
        response = requests.request(method, self.url + path, headers=headers, timeout=30, **kwargs)
        assert response.status_code < 300, (method, path, response.status_code, response.text)
        return response.json() if response.content else {}


def _serve(port: int, broker: str) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=database_url(),
        MEMORYHUB_BROKER_DIR=broker,  # deleting a record memory queues its purge here
        MEMORYHUB_OUTBOUND_ALLOW_PRIVATE="1",  # the fake mem0 listens on 127.0.0.1, over HTTP
        MEMORYHUB_OUTBOUND_ALLOW_HTTP="1",
    )
    return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [
            sys.executable,
            "-m",
            "gunicorn",
            "memoryhub.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--timeout",
            "60",
            "--log-level",
            "warning",
            # Lines of any length reach the app: gunicorn's own limit (4094 bytes) answers an
            # HTML 414 of its own, before memoryhub sees the request.
            "--limit-request-line",
            "0",
        ],
        env=environ,
        cwd=settings.BASE_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _seed(seed: Seed, mem0_url: str) -> None:
    """One of everything, made through the API itself, and spares of what the fuzzer may
    delete, end or archive (an If-Match of "*" is a string like any other), so that the
    objects the other operations reach stay."""
    ids, call = seed.ids, seed.call

    def memory(name: str, **fields) -> str:
        return call("POST", "/api/v1/memories", json={"name": name, **fields})["id"]

    def put(memory_id: str, path: str) -> None:
        call("PUT", f"/api/v1/memories/{memory_id}/files/{path}", json={"content": "hi"})

    ids["agent_id"] = call("POST", "/api/v1/agents", json={"name": "Fuzzed"})["id"]
    ids["spare_agent"] = call("POST", "/api/v1/agents", json={"name": "Spare"})["id"]
    ids["file_memory"] = memory("Notes")
    put(ids["file_memory"], FILE_PATH)
    put(ids["file_memory"], SPARE_FILE_PATH)
    revisions = call("GET", f"/api/v1/memories/{ids['file_memory']}/revisions")
    ids["revision_id"] = revisions["results"][-1]["id"]
    ids["spare_memory"] = memory("Spare")
    ids["history_memory"] = memory("History")
    put(ids["history_memory"], FILE_PATH)
    provider = {
        "type": "mem0_oss",
        "name": "fake mem0",
        "config": {"base_url": mem0_url, "read_timeout": 2},
        "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
    }
    ids["provider_id"] = call("POST", "/api/v1/memory-providers", json=provider)["id"]
    ids["spare_provider"] = call("POST", "/api/v1/memory-providers", json=provider)["id"]
    ids["record_memory"] = memory("Records", type="mem0_oss", provider_id=ids["provider_id"])
    records = f"/api/v1/memories/{ids['record_memory']}/records"
    ids["record_id"] = call("POST", records, json={"text": "likes tea"})["id"]
    ids["spare_record"] = call("POST", records, json={"text": "likes coffee"})["id"]
    mounts = [
        {"name": "notes", "memory_id": ids["file_memory"], "access": "write"},
        {"name": "records", "memory_id": ids["record_memory"], "access": "write"},
    ]
    ids["name"] = "notes"

    def thread(**fields) -> str:
        body = {"agent_id": ids["agent_id"], **fields}
        return call("POST", "/api/v1/threads", json=body)["id"]

    def run(thread_id: str, **fields) -> dict:
        return call("POST", f"/api/v1/threads/{thread_id}/runs", json=fields)

    ids["thread_id"] = thread(end_user="alice", memories=mounts)
    ids["mounts_thread"] = thread(end_user="alice", memories=mounts)
    ids["spare_thread"] = thread()
    accepted = run(ids["thread_id"], input="tea?")
    ids["run_id"], seed.tokens["running"] = accepted["id"], accepted["token"]
    ended = run(ids["thread_id"], input="bye")
    call("POST", f"/api/v1/runs/{ended['id']}/end")
    seed.tokens["ended"] = ended["token"]
    ids["spare_run"] = run(ids["spare_thread"])["id"]
    run(thread(end_user="bob"), input="hello")
    ids["end_user"] = "bob"

    def fact(text: str) -> str:
        body = {"path": "users/{user}/", "text": text, "tags": ["drinks"]}
        return call("POST", "/v0/memory/facts", key="running", json=body)["id"]

    ids["fact_id"] = fact("Prefers tea")
    ids["spare_fact"] = fact("Prefers coffee")
    ids["spare_staff_fact"] = fact("Prefers water")


# What an operation may take away from the others: it works on a spare instead.
SPARES = {
    ("DELETE", "/api/v1/agents/{agent_id}"): {"agent_id": "spare_agent"},
    ("DELETE", "/api/v1/agents/{agent_id}/facts/{fact_id}"): {"fact_id": "spare_staff_fact"},
    ("DELETE", "/api/v1/memories/{memory_id}"): {"memory_id": "spare_memory"},
    ("DELETE", "/api/v1/memories/{memory_id}/revisions"): {"memory_id": "history_memory"},
    ("DELETE", "/api/v1/memories/{memory_id}/records/{record_id}"): {"record_id": "spare_record"},
    ("PATCH", "/api/v1/memory-providers/{provider_id}"): {"provider_id": "spare_provider"},
    ("DELETE", "/api/v1/memory-providers/{provider_id}"): {"provider_id": "spare_provider"},
    ("POST", "/api/v1/runs/{run_id}/end"): {"run_id": "spare_run"},
    ("POST", "/api/v1/threads/{thread_id}/archive"): {"thread_id": "spare_thread"},
    ("POST", "/api/v1/threads/{thread_id}/memories"): {"thread_id": "mounts_thread"},
    ("PATCH", "/api/v1/threads/{thread_id}/memories/{name}"): {"thread_id": "mounts_thread"},
    ("DELETE", "/api/v1/threads/{thread_id}/memories/{name}"): {"thread_id": "mounts_thread"},
    ("DELETE", "/v0/memory/facts/{fact_id}"): {"fact_id": "spare_fact"},
}


def _generated_schema() -> dict:
    """The schema /api/schema/ serves, generated in this process (the seed fixture checks
    that the server serves exactly this), so that each operation is a test of its own."""
    generator = SchemaGenerator()
    return json.loads(OpenApiJsonRenderer().render(generator.get_schema(request=None, public=True)))


SCHEMA = _generated_schema()
CONFIG = schemathesis.Config.from_dict(
    {
        "suppress-health-check": ["all"],
        "generation": {
            "max-examples": EXAMPLES,
            "database": "none",
            # Headers cannot carry NUL or line breaks at all (requests refuses them).
            "exclude-header-characters": "\r\n\x00",
        },
        "phases": {"stateful": {"enabled": False}},
    }
)
schema = schemathesis.openapi.from_dict(SCHEMA, config=CONFIG)


@pytest.fixture(scope="module")
def seed(django_db_setup, django_db_blocker, tmp_path_factory, request):
    """A live gunicorn on the test database with a seeded workspace, for the whole module;
    the database is flushed afterwards, as a transactional test's is."""
    mem0 = OssServer(api_key=OSS_KEY, admin_key=OSS_ADMIN_KEY).start()
    with django_db_blocker.unblock():
        workspace = create_workspace("Fuzzed")
        keys = {p: create_api_key(workspace, p)[1] for p in ("read", "run", "write")}
    port = free_port()
    server = _serve(port, str(tmp_path_factory.mktemp("broker")))
    try:
        seed = Seed(url=f"http://127.0.0.1:{port}", keys=keys)
        wait_until_up(seed.url, server)
        served = requests.get(
            seed.url + "/api/schema/", headers={"Accept": "application/json"}, timeout=30
        )
        assert served.json() == SCHEMA, "the fuzzed schema is not the one served"
        _seed(seed, mem0.url)
        seed.started = time.monotonic()
        yield seed
        _report(request, seed)
    finally:
        stop(server)
        mem0.stop()
        with django_db_blocker.unblock():
            call_command("flush", verbosity=0, interactive=False)


def _report(request, seed: Seed) -> None:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    operations = {operation for operation, _ in seed.statuses}
    calls = sum(seed.statuses.values())
    by_status = Counter()
    for (_, status), count in seed.statuses.items():
        by_status[status] += count
    line = (
        f"schemathesis: {len(operations)} operations, {calls} calls in "
        f"{time.monotonic() - seed.started:.1f} s ({EXAMPLES} examples per operation); "
        + ", ".join(f"{status}: {count}" for status, count in sorted(by_status.items()))
        + "; by phase: "
        + ", ".join(f"{phase}: {count}" for phase, count in sorted(seed.phases.items()))
    )
    succeeded = {operation for (operation, status), _ in seed.statuses.items() if status < 300}
    if operations - succeeded:
        line += "; never 2xx: " + ", ".join(sorted(operations - succeeded))
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # shown even when nothing failed
            reporter.write_line("")
            reporter.write_line(line)


class Choices:
    """Choices that depend only on the case as generated (a replayed case makes them again),
    and on what is chosen (so that two choices about one case do not go together)."""

    def __init__(self, case) -> None:
        self.case = repr((case.method, case.path, case.path_parameters, case.query, case.body))
        self.case += repr(case.headers)

    def pick(self, choices: int, what: str) -> int:
        return zlib.crc32(f"{what}:{self.case}".encode()) % choices


def _credentials(case, seed: Seed, choices: Choices) -> dict[str, str]:
    security = case.operation.definition.raw.get("security", [])
    schemes = {name for requirement in security for name in requirement}
    options: list[dict[str, str]] = []
    if "apiKey" in schemes:
        options += [{"Authorization": f"Bearer {seed.keys[p]}"} for p in ("write", "run", "read")]
        options.append({"Authorization": f"Bearer {seed.keys['write']}"})  # writes reach most
    if "runToken" in schemes:
        options += [{"x-agentos-run-token": seed.tokens["running"]}] * 3
        options.append({"x-agentos-run-token": seed.tokens["ended"]})
    options.append({})  # no credentials
    return options[choices.pick(len(options), "credentials")]


def _path_parameters(case, seed: Seed, choices: Choices) -> None:
    """Mostly the seeded objects (so that a case gets past the 404), sometimes what was
    generated; spares where a call would take the others' objects away."""
    if not case.path_parameters or choices.pick(5, "generated ids") == 0:
        return
    ids = dict(seed.ids)
    ids["memory_id"] = ids["record_memory"] if "/records" in case.path else ids["file_memory"]
    if case.path.endswith("/files/{file_path}") and choices.pick(2, "file path"):
        ids["file_path"] = SPARE_FILE_PATH if case.method == "DELETE" else FILE_PATH
    for name, spare in SPARES.get((case.method, case.path), {}).items():
        ids[name] = seed.ids[spare]
    for name in case.path_parameters:
        if name in ids:
            case.path_parameters[name] = ids[name]


def _body_ids(case, seed: Seed, choices: Choices) -> None:
    """Now and then the body names seeded objects, so that creating gets past the lookup."""
    if not isinstance(case.body, dict) or not choices.pick(3, "body ids"):
        return
    known = {
        "agent_id": seed.ids["agent_id"],
        "memory_id": seed.ids["file_memory"],
        "provider_id": seed.ids["provider_id"],
    }
    for name, value in known.items():
        if name in case.body:
            case.body[name] = value


@schema.parametrize()
def test_every_answer_is_documented(case, seed):
    choices = Choices(case)
    _path_parameters(case, seed, choices)
    _body_ids(case, seed, choices)
    headers = _credentials(case, seed, choices)
    precondition = case.method in ("PATCH", "PUT") and "If-Match" in (case.headers or {})
    if precondition and choices.pick(2, "if-match"):
        case.headers["If-Match"] = "*"  # sometimes get past the precondition
    response = case.call_and_validate(base_url=seed.url, headers=headers, checks=CHECKS, timeout=30)
    seed.statuses[(case.operation.label, response.status_code)] += 1
    seed.phases[case.meta.phase.name.value if case.meta else "?"] += 1
