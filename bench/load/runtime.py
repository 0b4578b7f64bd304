"""One simulated agent runtime: runs accepted on its thread one after another, each making
a few calls of the public API (README) the way an agent's code and its model's tool calls
do, until its time is up. Every acknowledged write goes into the journal."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException

from bench.load.http import Answer, Http
from bench.load.journal import Journal, new_marker

WORDS = ["tea", "coffee", "invoice", "refund", "shipping", "parcel"]
WORDS += ["çağrı", "şirket", "müdür", "Ayşe", "crème"]  # folded by the search
OUTCOME_UNKNOWN = "error: outcome_unknown"
# What a tool answers while a dependency is down (README, Errors): nothing was done.
OUTAGE_CONTENT = ("error: unavailable", "error: write_unconfirmed")
RESEND_WITHIN = 60  # seconds a keyed save refused during an outage is sent again
FILE_RETRIES = 50  # a shared file under contention: tries before giving up on one edit


@dataclass
class Setup:
    """What the runtimes share: the servers, the keys and the memories."""

    bases: list[str]
    write_key: str
    run_key: str
    agents: list[str]
    file_memory: str
    files: list[str]  # paths every runtime edits, so that edits collide (412s)
    record_memory: str
    provider: str
    # (agent, "notes/" or an end user) -> facts there, which several runtimes replace
    fact_pool: dict[tuple[str, str], list[int]] = field(default_factory=dict)


def _pk(public_id: str) -> int:
    return int(str(public_id).removeprefix("m_"))


def _error(answer: Answer) -> dict:
    error = answer.body.get("error") if isinstance(answer.body, dict) else None
    return error if isinstance(error, dict) else {}


def label(answer: Answer) -> str:
    """The status, with the envelope's code and dependency or reason where a fault shows."""
    error = _error(answer)
    if not error or (answer.status < 500 and answer.status != 409):
        return str(answer.status)
    detail = error.get("dependency" if answer.status == 503 else "reason") or ""
    return " ".join(str(part) for part in (answer.status, error.get("code"), detail) if part)


def is_outage(answer: Answer) -> bool:
    """The documented answers of a dependency that is down: 503 ``unavailable``, or 409
    ``write_unconfirmed`` for a write whose backend never confirmed it."""
    error = _error(answer)
    return (answer.status, error.get("code")) == (503, "unavailable") or (
        answer.status == 409 and error.get("reason") == "write_unconfirmed"
    )


class Runtime:
    def __init__(self, number: int, setup: Setup, journal: Journal, seed: int) -> None:
        self.number, self.setup, self.journal = number, setup, journal
        self.random = random.Random(seed)
        self.http = Http(setup.bases)
        self.twin = Http(setup.bases)  # for a repeat sent while the original is under way
        # Runtimes come in pairs on one agent and one end user, so that each user's folder
        # has two writers at once too.
        self.agent = setup.agents[number // 2 % len(setup.agents)]
        self.user = f"user-{number // 2}"
        self.thread = ""
        self.run = ""
        self.token = ""
        self.outage_seen = False  # an outage answer since a write reset this (fault runs)
        self.operations: list[tuple[int, Callable[[], None]]] = [
            (3, self.search),
            (3, self.save),
            (2, self.replace),
            (2, self.keyed_save),
            (3, self.file_edit),
            (2, self.file_tool),
            (2, self.fact_tool),
            (2, self.record_write),
            (1, self.record_tool),
        ]

    # --- plumbing ----------------------------------------------------------------------

    def call(
        self, operation: str, method: str, path: str, body: object = None, *,
        auth: str = "token", expect: tuple[int, ...] = (200, 201), headers: dict | None = None,
        via: Http | None = None,
    ) -> Answer | None:  # fmt: skip
        """The answer, timed under ``operation``; None, and a problem in the journal, when
        its status is not one of ``expect`` or none came."""
        sent = dict(headers or {})
        if auth == "token":
            sent["x-agentos-run-token"] = self.token
        else:
            sent["Authorization"] = f"Bearer {auth}"
        started = time.perf_counter()
        try:
            answer = (via or self.http).request(method, path, body, sent)
        except (OSError, HTTPException) as exc:
            self.journal.answered("no answer", time.perf_counter() - started)
            self.journal.problem(f"{operation}: {method} {path}: no answer ({exc})")
            return None
        self.journal.answered(label(answer), answer.seconds)
        self.journal.timed(operation, answer.seconds)
        if answer.status not in expect and self.journal.outages and is_outage(answer):
            self.outage_seen = True
            return None
        if answer.status not in expect:
            self.journal.problem(
                f"{operation}: {method} {path} answered {answer.status}: "
                f"{json.dumps(answer.body)[:300]}"
            )
            return None
        return answer

    def twice(
        self, operation: str, path: str, body: dict, expect: tuple[int, ...] = (200, 201)
    ) -> list[Answer | None]:
        """The same POST twice: one after the other (a retry after a lost answer), or both at
        once on the two web processes (a retry racing the original)."""
        repeat = operation + "_repeat"
        if self.random.random() < 0.5:
            first = self.call(operation, "POST", path, body, expect=expect)
            return [first, self.call(repeat, "POST", path, body, expect=expect)]
        answers: list[Answer | None] = [None, None]

        def send_repeat() -> None:
            answers[1] = self.call(repeat, "POST", path, body, expect=expect, via=self.twin)

        self.twin.turn = self.http.turn + 1  # the other web process
        racing = threading.Thread(target=send_repeat)
        racing.start()
        answers[0] = self.call(operation, "POST", path, body, expect=expect)
        racing.join()
        return answers

    def sometimes_twice(
        self,
        share: float,
        operation: str,
        path: str,
        body: dict,
        expect: tuple[int, ...] = (200, 201),
    ) -> list[Answer | None]:
        """The POST sent twice (``twice``) in ``share`` of the calls, else once."""
        if self.random.random() < share:
            return self.twice(operation, path, body, expect=expect)
        return [self.call(operation, "POST", path, body, expect=expect)]

    def text(self, marker: str) -> str:
        return f"{self.random.choice(WORDS)} {self.random.choice(WORDS)} {marker}"

    def path(self) -> str:
        return self.random.choice(["notes/", "users/{user}/"])

    # --- the loop ----------------------------------------------------------------------

    def start(self) -> None:
        mounts = [
            {"name": "team", "memory_id": self.setup.file_memory, "access": "write"},
            {"name": "people", "memory_id": self.setup.record_memory, "access": "write"},
        ]
        body = {"agent_id": self.agent, "end_user": self.user, "memories": mounts}
        answer = self.call("create_thread", "POST", "/api/v1/threads", body,
                           auth=self.setup.run_key, expect=(201,))  # fmt: skip
        if answer is None:
            raise RuntimeError("the runtime could not create its thread")
        self.thread = answer.body["id"]

    def until(self, deadline: float) -> None:
        """Runs of a few operations each until ``deadline``; the last run is ended too."""
        weights = [weight for weight, _ in self.operations]
        actions = [action for _, action in self.operations]
        try:
            while time.monotonic() < deadline:
                if not self.accept_run():
                    time.sleep(0.2)
                    continue
                for action in self.random.choices(actions, weights, k=self.random.randint(4, 8)):
                    action()
                self.end_run()
            self.purge()
        except Exception as exc:  # noqa: BLE001 - a runtime that stops early fails the check
            self.journal.problem(f"runtime {self.number} stopped: {exc!r}")
        finally:
            self.http.close()
            self.twin.close()

    def accept_run(self) -> bool:
        body = {"input": {"message": self.text("hello")}}
        answer = self.call("accept_run", "POST", f"/api/v1/threads/{self.thread}/runs", body,
                           auth=self.setup.run_key, expect=(201,))  # fmt: skip
        if answer is None:
            return False
        self.run, self.token = answer.body["id"], answer.body["token"]
        return True

    def end_run(self) -> None:
        """Ended by its token, now and then twice (ending twice is fine: README); a write with
        the token afterwards is refused."""
        url = f"/api/v1/runs/{self.run}/end"
        answers = self.sometimes_twice(0.25, "end_run", url, {}, expect=(200,))
        if any(answer is not None for answer in answers):
            self.journal.add("runs", self.run)
            # The next call goes to the other web process: it must know the run ended.
            body = {"path": "notes/", "text": self.text(new_marker("late"))}
            self.call("write_after_end", "POST", "/v0/memory/facts", body, expect=(401,))

    # --- facts -------------------------------------------------------------------------

    def search(self) -> None:
        body = {"query": " ".join(self.random.sample(WORDS, 2)), "k": 5}
        self.call("search", "POST", "/v0/memory/search", body)

    def _save(self, operation: str, body: dict, expect: tuple[int, ...] = (201,)) -> dict | None:
        self.outage_seen = False
        answer = self.call(operation, "POST", "/v0/memory/facts", body, expect=expect)
        if answer is None and self.outage_seen:
            self.journal.add("refused", ("fact", body["text"].split()[-1]))
        return None if answer is None else answer.body

    def save(self) -> None:
        marker = new_marker("fact")
        path = self.path()
        fact = self._save("save", {"path": path, "text": self.text(marker)})
        if fact is not None:
            self.journal.add("facts", (_pk(fact["id"]), fact["version"], marker))
            with self.journal.lock:
                self._pool(path).append(_pk(fact["id"]))

    def _pool(self, path: str) -> list[int]:
        folder = "notes/" if path == "notes/" else self.user
        return self.setup.fact_pool.setdefault((self.agent, folder), [])

    def replace(self) -> None:
        """A new version of a recent fact of the agent's shared folder or of the end user's
        folder: other runtimes replace the same facts at the same time."""
        with self.journal.lock:
            choices = [(pk, path) for path in ("notes/", "users/{user}/")
                       for pk in self._pool(path)[-20:]]  # fmt: skip
        if not choices:
            return self.save()
        pk, path = self.random.choice(choices)
        marker = new_marker("repl")
        body = {"path": path, "text": self.text(marker), "replaces": f"m_{pk}"}
        fact = self._save("replace", body, expect=(200, 201))
        if fact is not None:
            self.journal.add("facts", (_pk(fact["id"]), fact["version"], marker))

    def keyed_save(self) -> None:
        """A save with an idempotency key, sent twice: both answer the one fact saved."""
        marker, key = new_marker("key"), f"key-{uuid.uuid4().hex[:12]}"
        body = {"path": self.path(), "text": self.text(marker), "key": key}
        self.outage_seen = False
        answers = self.twice("keyed_save", "/v0/memory/facts", body)
        if None in answers and self.outage_seen:
            kept = [self.resend(body), *[a for a in answers if a is not None]]
            answers = kept if len(kept) == 2 else kept * 2
        if None in answers:
            return
        first, again = (answer.body for answer in answers)
        self.journal.add("facts", (_pk(first["id"]), first["version"], marker))
        self.journal.add("keys", (self.run, key, _pk(first["id"]), first["version"]))
        if (again["id"], again["version"]) != (first["id"], first["version"]):
            self.journal.problem(f"keyed_save: {key} answered {first['id']} then {again['id']}")

    def resend(self, body: dict) -> Answer | None:
        """A keyed save refused during an outage, sent again with its key until it is
        answered: the service must have written nothing for the refusal (one version)."""
        deadline = time.monotonic() + RESEND_WITHIN
        while time.monotonic() < deadline:
            self.outage_seen = False
            answer = self.call("keyed_save_resent", "POST", "/v0/memory/facts", body)
            if answer is not None or not self.outage_seen:
                if answer is not None:
                    self.journal.add("resent_keys", (self.run, body["key"]))
                return answer
            time.sleep(0.5)
        self.journal.problem(f"keyed_save: {body['key']} refused for {RESEND_WITHIN} s")
        return None

    def fact_tool(self) -> None:
        """save_memory through the facts tools; half the calls are sent twice."""
        marker, call_id = new_marker("ftool"), f"call_{uuid.uuid4().hex[:12]}"
        tool_call = {
            "id": call_id,
            "type": "function",
            "function": {
                "name": "save_memory",
                "arguments": json.dumps({"text": self.text(marker)}),
            },
        }
        body = {"paths": ["notes/"], "tool_call": tool_call}
        self.outage_seen = False
        answers = self.sometimes_twice(0.5, "fact_tool", "/v0/memory/tools/call", body)
        content = self._same_content("fact_tool", call_id, answers)
        refused = self.outage_seen and all(answer is None for answer in answers)
        if refused or str(content).startswith(OUTAGE_CONTENT):
            self.journal.add("refused", ("fact", marker))
        if content is None or content.startswith("error:"):
            return
        saved = json.loads(content)
        self.journal.add("facts", (_pk(saved["saved"]), saved["version"], marker))
        self.journal.add("tool_calls", (self.run, call_id, "fact", marker))

    def _same_content(self, operation: str, call_id: str, answers: list) -> str | None:
        if any(answer is None for answer in answers):
            return None
        contents = [answer.body["content"] for answer in answers]
        # A record tool's repeat that meets its original still at mem0 may not know the
        # outcome (README): it says so instead of adding the record again. In a fault run
        # one of the two may also be refused (the dependency down) while the other is done.
        unknown = (OUTCOME_UNKNOWN, *OUTAGE_CONTENT) if self.journal.outages else OUTCOME_UNKNOWN
        known = [c for c in contents if not c.startswith(unknown)]
        if len(set(known)) > 1:
            self.journal.problem(f"{operation}: {call_id} sent twice answered {contents}")
        return (known or contents)[0]

    # --- files -------------------------------------------------------------------------

    def _file_url(self, path: str) -> str:
        return f"/api/v1/memories/{self.setup.file_memory}/files/{path}"

    def file_edit(self) -> None:
        """Read, add a line, write with If-Match; on 412 start again from the current file."""
        path = self.random.choice(self.setup.files)
        marker = new_marker("file")
        key = self.setup.run_key
        current = self.call("file_read", "GET", self._file_url(path), auth=key)
        if current is None:
            return
        content, etag = current.body["content"], current.etag
        for _ in range(FILE_RETRIES):
            body = {"content": content + marker + "\n"}
            self.outage_seen = False
            answer = self.call("file_edit", "PUT", self._file_url(path), body, auth=key,
                               expect=(200, 201, 412), headers={"If-Match": etag})  # fmt: skip
            if answer is None:
                if self.outage_seen:
                    self.journal.add("refused", ("file", marker))
                return
            if answer.status != 412:
                self.journal.add("files", (self.setup.file_memory, path,
                                           answer.body["version"], marker))  # fmt: skip
                return
            self.journal.retried("file_edit")
            error = answer.body["error"]
            content, etag = error["current"]["content"], error["etag"]
        self.journal.problem(f"file_edit: {path} still stale after {FILE_RETRIES} tries")

    def file_tool(self) -> None:
        """memory_file_insert at the top of a shared file, after a view when the file changed
        since this conversation saw it. Some ids are sent twice."""
        path = self.random.choice(self.setup.files)
        marker = new_marker("ttool")
        for _ in range(FILE_RETRIES):
            call_id = f"call_{uuid.uuid4().hex[:12]}"
            body = {
                "id": call_id,
                "name": "memory_file_insert",
                "arguments": {"path": path, "insert_line": 0, "insert_text": marker},
            }
            url = f"/api/v1/runs/{self.run}/tool-calls"
            answers = self.sometimes_twice(0.3, "file_tool", url, body)
            content = self._same_content("file_tool", call_id, answers)
            if content is None:
                return
            if not content.startswith("error:"):
                version = int(content.rsplit("version ", 1)[1].rstrip(")."))
                self.journal.add("files", (self.setup.file_memory, path, version, marker))
                self.journal.add("tool_calls", (self.run, call_id, "file", marker))
                return
            # The answer shows the current file but does not count as reading it: view it.
            self.journal.retried("file_tool")
            view = {"id": f"call_{uuid.uuid4().hex[:12]}", "name": "memory_file_view",
                    "arguments": {"path": path}}  # fmt: skip
            self.call("file_view_tool", "POST", url, view)
        self.journal.problem(f"file_tool: {path} still stale after {FILE_RETRIES} tries")

    # --- records -----------------------------------------------------------------------

    def record_write(self) -> None:
        marker = new_marker("rec")
        url = f"/api/v1/memories/{self.setup.record_memory}/records"
        answer = self.call("record_write", "POST", url, {"text": self.text(marker)},
                           auth=self.setup.run_key, expect=(201,))  # fmt: skip
        if answer is not None:
            self.journal.add("records", (self.setup.record_memory, answer.body["id"], marker))

    def record_tool(self) -> None:
        marker, call_id = new_marker("rtool"), f"call_{uuid.uuid4().hex[:12]}"
        body = {"id": call_id, "name": "memory_record_add",
                "arguments": {"text": self.text(marker)}}  # fmt: skip
        url = f"/api/v1/runs/{self.run}/tool-calls"
        answers = self.sometimes_twice(0.5, "record_tool", url, body)
        content = self._same_content("record_tool", call_id, answers)
        if content is not None and not content.startswith("error:"):
            self.journal.add("records", (self.setup.record_memory, "", marker))
            self.journal.add("tool_calls", (self.run, call_id, "record", marker))

    # --- a purge, done by the Celery workers ---------------------------------------------

    def purge(self) -> None:
        """A scratch record memory with one record, deleted: its purge is a Celery task."""
        key = self.setup.write_key
        body = {"name": f"scratch {self.number}", "type": "mem0_oss",
                "provider_id": self.setup.provider}  # fmt: skip
        memory = self.call("purge", "POST", "/api/v1/memories", body, auth=key, expect=(201,))
        if memory is None:
            return
        url, marker = f"/api/v1/memories/{memory.body['id']}", new_marker("scratch")
        self.call("record_write", "POST", url + "/records", {"text": self.text(marker)},
                  auth=key, expect=(201,))  # fmt: skip
        deleted = self.call(
            "purge",
            "DELETE",
            url,
            auth=key,
            expect=(204,),
            headers={"If-Match": memory.etag or memory.body.get("etag", "*")},
        )
        if deleted is not None:
            self.journal.add("purges", (memory.body["id"], marker))
