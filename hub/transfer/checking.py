"""Checking a whole export before anything is written.

One pass over the file checks its integrity (every line whole, the counts and the checksum
of the manifest), every row by the API's rules (:mod:`.rows`), every reference (it names
a row of the workspace the file carries, earlier in the file), what the database holds
already (a row whose id exists must be the same row: same workspace, same parents), and
the limits of what each new agent, memory and thread holds. The first problem refuses the
whole file, naming its line; a damaged file is called damaged before any row's problem.

The manifest's SHA-256 is an integrity check, not a signature: an export moves between
deployments, which share no key, so whoever edits a file can compute it again. What keeps
an edited file harmless is that each of its rows is checked as the API checks a request.

Memory grows with the ids of the rows others refer to (agents, people, memories,
threads, facts: a few dozen bytes each), never with their content.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from facts import paths as fact_paths
from hub.transfer import rows
from hub.transfer.format import (
    BATCH,
    FORMAT,
    KINDS,
    MODELS,
    VERSION,
    DamagedFile,
    Refused,
)
from memoryhub import ids
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import EndUser, Memory, MemoryProvider
from records.services import namespaces
from records.services.providers import backend_key

# What a new row of these kinds goes into. An agent, a memory or a thread that exists
# already is left as it is, with what it holds: adding to it would pass by the byte and
# fact counters its writers keep, and the limits they enforce.
CONTAINERS = {
    "thread_mount": ("thread", "thread_id"),
    "fact": ("agent", "agent_id"),
    "fact_version": ("agent", "agent_id"),
    "fact_quota": ("agent", "agent_id"),
    "file": ("memory", "memory_id"),
    "revision": ("memory", "memory_id"),
}
# The columns a row shares with the row of the same id in the database when that row is
# the same one (which is then left as it is): its workspace, and what it belongs to. A
# provider's address too: its memories' namespaces are checked on the backend it names.
IDENTITY = {
    "workspace": (),
    "memory_provider": ("workspace_id", "type", "config"),
    "agent": ("workspace_id",),
    "end_user": ("workspace_id", "external_id"),
    "memory": ("workspace_id", "kind", "provider_id", "namespace"),
    "thread": ("workspace_id", "agent_id"),
    "thread_mount": ("workspace_id", "thread_id", "memory_id"),
    "fact": ("workspace_id", "agent_id", "scope", "owner_id"),
    "fact_version": ("workspace_id", "agent_id", "fact_id", "version"),
    "fact_quota": ("workspace_id", "agent_id", "scope", "shard"),
    "file": ("workspace_id", "memory_id"),
    "revision": ("workspace_id", "memory_id", "public_id"),
}


@dataclass
class Checked:
    """What the import needs of a checked file."""

    counts: dict[str, int]
    workspace_id: str
    sha256: str  # of every line before the manifest: the import reads the same file
    existing: dict[str, set]  # ids in the database already, by kind (see CONTAINERS)
    # A new provider's backend (where its memories claim their namespaces), as the file
    # gives it: an existing provider's is read from its stored row when the import writes.
    new_backends: dict[str, str]


def check(lines: Iterable[str]) -> Checked:
    """Read a whole export; Refused (DamagedFile for a damaged one) when anything is off."""
    integrity, content = _Integrity(), _Content()
    refusal: Refused | None = None
    for number, text in enumerate(lines, start=1):
        item = integrity.read(number, text)
        if item is None or refusal is not None:
            continue
        try:
            content.read(number, item)
        except Refused as error:
            refusal = error  # told once the file is known to be whole
    integrity.finish()
    if refusal is None:
        try:
            content.finish()
        except Refused as error:
            refusal = error
    if refusal is not None:
        raise refusal
    return Checked(
        counts=integrity.row_counts(),
        workspace_id=content.workspace_id,
        sha256=integrity.digest.hexdigest(),
        existing=content.known.found,
        new_backends={
            pid: provider.backend
            for pid, provider in content.providers.items()
            if pid not in content.known.found["memory_provider"]
        },
    )


class _Integrity:
    """The file as a whole: a header of this format, whole lines, the manifest last."""

    def __init__(self) -> None:
        self.digest, self.counts, self.manifest = hashlib.sha256(), Counter[str](), None

    def read(self, number: int, text: str) -> dict | None:
        """The line's JSON object (None for the manifest); DamagedFile for a bad line."""
        if self.manifest is not None:
            raise DamagedFile(f"line {number}: more after the manifest")
        try:
            item = json.loads(text)
        except ValueError:
            raise DamagedFile(f"line {number} is not whole JSON (a truncated file?)") from None
        except RecursionError:
            raise DamagedFile(f"line {number} nests arrays or objects too deep") from None
        kind = item.get("kind") if isinstance(item, dict) else None
        if number == 1 and (kind != "header" or item.get("format") != FORMAT):
            raise DamagedFile("line 1 is not a memoryhub export header")
        if number == 1 and item.get("version") != VERSION:
            raise DamagedFile(f"format version {item.get('version')!r}; this reads {VERSION}")
        if kind == "manifest":
            self.manifest = item
            return None
        if not text.endswith("\n"):
            raise DamagedFile(f"line {number} is cut short (a truncated file?)")
        if kind != "header" and kind not in KINDS:
            raise DamagedFile(f"line {number}: unknown kind {kind!r}")
        self.digest.update(text.encode())
        self.counts[kind] += 1
        return item

    def finish(self) -> None:
        if self.manifest is None:
            raise DamagedFile("no manifest at the end (a truncated file?)")
        if self.manifest.get("sha256") != self.digest.hexdigest():
            raise DamagedFile("the checksum does not match: the file was changed or damaged")
        if self.manifest.get("counts") != self.row_counts():
            raise DamagedFile("the counts do not match the manifest")

    def row_counts(self) -> dict[str, int]:
        return {kind: n for kind, n in self.counts.items() if kind != "header"}


@dataclass
class _Provider:
    type: str
    backend: str  # records.services.providers.backend_key


@dataclass
class _Memory:
    line: int
    kind: str
    type: str
    provider_id: str | None
    namespace: str | None
    stated: tuple[int, int, int]  # file_count, content_bytes, history_bytes as the row says
    files: int = 0
    content_bytes: int = 0
    history_bytes: int = 0


@dataclass
class _Thread:
    names: set[str] = field(default_factory=set)
    memories: set[str] = field(default_factory=set)


class _Content:
    """The rows: each by the API's rules, its references, and the limits of new containers."""

    def __init__(self) -> None:
        self.workspace_id = ""
        self.has_workspace_row = False
        self.database: _InDatabase | None = None
        self.providers: dict[str, _Provider] = {}
        self.agents: dict[str, int] = {}  # id -> line
        self.end_users: dict[str, str] = {}  # id -> external_id
        self.external_ids: set[str] = set()
        self.memories: dict[str, _Memory] = {}
        self.namespaces: dict[tuple[str, str], str] = {}  # (backend, namespace) -> memory
        self.threads: dict[str, _Thread] = {}
        self.facts: dict[int, tuple[str, str | None]] = {}  # id -> (agent, owner)
        self.fact_counts: Counter[tuple[str, str]] = Counter()  # (agent, scope): new facts
        self.counters: dict[tuple[str, str], list[int]] = {}  # (agent, scope): [facts, line]
        self.shards: set[tuple[str, str, int]] = set()
        self.paths: set[tuple[str, str]] = set()  # (memory, path) of files
        self.revisions: Counter[tuple[str, str]] = Counter()  # (memory, path) of new ones
        self.later: list[tuple[int, str, Callable[[], None]]] = []  # references forward
        self.default_mounts: list[tuple[int, str, str]] = []  # agents' (line, where, memory)
        self.kind = "header"

    # -- reading ----------------------------------------------------------------------------

    def read(self, number: int, item: dict) -> None:
        kind = item["kind"]
        if kind == "header":
            return self._header(number, item)
        if kind == "record":  # read from mem0 and never written back: nothing to store
            return None
        if kind != self.kind:
            self.known.flush()  # what exists is known before the next kind's rows
            self.kind = kind
        row = item.get("row")
        what = f"{kind} {row.get('id')}" if isinstance(row, dict) else kind
        try:
            values = rows.clean(kind, row)
            if kind != "workspace":
                self._in_workspace(values)
            getattr(self, f"_{kind}")(values, number)
        except ApiError as error:
            raise Refused(f"line {number}: {what}: {error.message}") from None
        self.known.add(number, kind, values)
        return None

    def _header(self, number: int, item: dict) -> None:
        workspace_id = item.get("workspace")
        if number != 1 or not isinstance(workspace_id, str):
            raise Refused(f"line {number}: a header names its workspace on line 1 only")
        if not ids.is_well_formed(workspace_id, "ws"):
            raise Refused("line 1: the header names no workspace id")
        self.workspace_id = workspace_id
        self.database = _InDatabase(workspace_id)

    @property
    def known(self) -> _InDatabase:
        """What the database holds: known from line 1 on, which is always the header."""
        assert self.database is not None
        return self.database

    def _in_workspace(self, values: rows.Values) -> None:
        if not self.has_workspace_row:
            raise ApiError(422, "comes before the workspace's row")
        if values["workspace_id"] != self.workspace_id:
            raise ApiError(
                422,
                f"belongs to workspace {values['workspace_id']}, not to {self.workspace_id},"
                " the workspace this file carries",
            )

    def _once(self, table: dict, values: rows.Values) -> None:
        if values["id"] in table:
            raise ApiError(422, "this id is in the file twice")

    def _named(self, table: dict, key: object, column: str, what: str) -> None:
        if key not in table:
            raise ApiError(422, f"{column} {key} names no {what} of this file's workspace")

    # -- one handler per kind, in the order an export writes them ---------------------------

    def _workspace(self, values: rows.Values, number: int) -> None:
        if self.has_workspace_row or values["id"] != self.workspace_id:
            raise ApiError(422, f"the file carries workspace {self.workspace_id} alone")
        self.has_workspace_row = True

    def _memory_provider(self, values: rows.Values, number: int) -> None:
        self._once(self.providers, values)
        backend = backend_key(values["type"], values["config"])
        self.providers[values["id"]] = _Provider(values["type"], backend)

    def _agent(self, values: rows.Values, number: int) -> None:
        self._once(self.agents, values)
        self.agents[values["id"]] = number
        for index, mount in enumerate(values["memory_mounts"]):
            where = f"agent {values['id']}: memory_mounts[{index}].memory_id"
            self.default_mounts.append((number, where, mount["memory_id"]))

    def _end_user(self, values: rows.Values, number: int) -> None:
        if values["external_id"] in self.external_ids:
            raise ApiError(422, f"end user {values['external_id']} is in the file twice")
        self._once(self.end_users, values)
        self.external_ids.add(values["external_id"])
        self.end_users[values["id"]] = values["external_id"]

    def _memory(self, values: rows.Values, number: int) -> None:
        self._once(self.memories, values)
        counters = (values["file_count"], values["content_bytes"], values["history_bytes"])
        self.memories[values["id"]] = _Memory(
            number,
            values["kind"],
            values["type"],
            values["provider_id"],
            values["namespace"],
            counters,
        )

    def _thread(self, values: rows.Values, number: int) -> None:
        self._named(self.agents, values["agent_id"], "agent_id", "agent")
        if values["end_user_id"] is not None:
            self._named(self.end_users, values["end_user_id"], "end_user_id", "end user")
        self._once(self.threads, values)
        self.threads[values["id"]] = _Thread()
        if values["forked_from_id"] is not None:
            where = f"thread {values['id']}: forked_from_id"
            self._later(number, where, self.threads, values["forked_from_id"], "thread")

    def _thread_mount(self, values: rows.Values, number: int) -> None:
        self._named(self.threads, values["thread_id"], "thread_id", "thread")
        self._named(self.memories, values["memory_id"], "memory_id", "memory")
        thread = self.threads[values["thread_id"]]
        if values["name"] in thread.names or values["memory_id"] in thread.memories:
            raise ApiError(422, "its thread mounts this name or this memory twice")
        thread.names.add(values["name"])
        thread.memories.add(values["memory_id"])
        limit = setting("memory.mounts_per_thread")
        if self._is_new("thread_mount", values) and len(thread.names) > limit:
            raise ApiError(422, f"a thread holds at most {limit} memory mounts")

    def _fact(self, values: rows.Values, number: int) -> None:
        self._named(self.agents, values["agent_id"], "agent_id", "agent")
        owner_id = values["owner_id"]
        if owner_id is not None:
            self._named(self.end_users, owner_id, "owner_id", "end user")
        self._in_owners_folder(values["path"], owner_id)
        self._once(self.facts, values)
        self.facts[values["id"]] = (values["agent_id"], owner_id)
        memory = (values["agent_id"], values["scope"])
        limit = setting("facts.max_facts_per_agent")
        if self._is_new("fact", values):
            self.fact_counts[memory] += 1
            if self.fact_counts[memory] > limit:
                raise ApiError(422, f"a facts memory holds at most {limit} facts")

    def _in_owners_folder(self, path: str, owner_id: str | None) -> None:
        """The path is its owner's folder (``users/<them>/``), or a shared one for none: as
        a run of that person (or of no one) would write it."""
        viewer = fact_paths.Viewer(
            is_run=True,
            end_user_id=owner_id,
            end_user_external_id=self.end_users.get(owner_id) if owner_id else None,
        )
        try:
            folder = fact_paths.resolve_for_write(path, viewer)
        except ApiError as error:
            message = f"path {path!r} with owner_id {owner_id}: {error.message}"
            raise ApiError(422, message) from None
        if folder.owner_id != owner_id:
            raise ApiError(422, f"owner_id {owner_id}, but {path!r} is no end user's folder")

    def _fact_version(self, values: rows.Values, number: int) -> None:
        self._named(self.facts, values["fact_id"], "fact_id", "fact")
        agent_id, owner_id = self.facts[values["fact_id"]]
        if values["agent_id"] != agent_id:
            raise ApiError(422, f"agent_id {values['agent_id']} is not its fact's, {agent_id}")
        self._in_owners_folder(values["path"], owner_id)

    def _fact_quota(self, values: rows.Values, number: int) -> None:
        self._named(self.agents, values["agent_id"], "agent_id", "agent")
        shard = (values["agent_id"], values["scope"], values["shard"])
        if shard in self.shards:
            raise ApiError(422, "this counter shard is in the file twice")
        self.shards.add(shard)
        if self._is_new("fact_quota", values):
            counter = self.counters.setdefault(shard[:2], [0, number])
            counter[0] += values["count"]

    def _file_memory(self, values: rows.Values) -> _Memory:
        self._named(self.memories, values["memory_id"], "memory_id", "memory")
        memory = self.memories[values["memory_id"]]
        if memory.kind != Memory.Kind.FILE:
            raise ApiError(422, f"memory {values['memory_id']} is not a file memory")
        return memory

    def _file(self, values: rows.Values, number: int) -> None:
        memory = self._file_memory(values)
        if (values["memory_id"], values["path"]) in self.paths:
            raise ApiError(422, f"{values['path']} is in its memory twice")
        self.paths.add((values["memory_id"], values["path"]))
        if self._is_new("file", values):
            memory.files += 1
            memory.content_bytes += values["size"]
            _within_total(memory)

    def _revision(self, values: rows.Values, number: int) -> None:
        memory = self._file_memory(values)
        if not self._is_new("revision", values):
            return
        memory.history_bytes += values["size"]
        _within_total(memory)
        path = (values["memory_id"], values["path"])
        self.revisions[path] += 1
        limit = setting("memory.revisions_per_file")
        if self.revisions[path] > limit:
            raise ApiError(
                422, f"{values['path']} has more than {limit} revisions (prune_history trims)"
            )

    # -- what needs the whole file ------------------------------------------------------------

    def _is_new(self, kind: str, values: rows.Values) -> bool:
        """Whether the row's container is new (else it is left as it is, rows and all)."""
        container, column = CONTAINERS[kind]
        return values[column] not in self.known.found[container]

    def _later(self, number: int, where: str, table: dict, key: str, what: str) -> None:
        """A reference to a row that may come later in the file: checked at the end."""

        def named() -> None:
            if key not in table:
                raise ApiError(422, f"{where} {key} names no {what} of this file's workspace")

        self.later.append((number, where, named))

    def finish(self) -> None:
        if self.database is None or not self.has_workspace_row:
            raise Refused("the file holds no row of its workspace")
        self.database.flush()
        self._stored_providers()
        checks = [(number, check) for number, _, check in self.later]
        checks += self._default_mount_checks()
        checks += [(m.line, self._provider_check(mid, m)) for mid, m in self.memories.items()]
        checks += [(m.line, _counters_check(mid, m)) for mid, m in self._new_memories()]
        checks += [(line, self._facts_check(memory, line)) for memory, line in self._counted()]
        for number, run in sorted(checks, key=lambda pair: pair[0]):
            try:
                run()
            except ApiError as error:
                raise Refused(f"line {number}: {error.message}") from None

    def _default_mount_checks(self) -> list[tuple[int, Callable[[], None]]]:
        """An agent's default mount names a memory of the file, or a deleted one: deleting
        a memory leaves the mounts that name it (a run then learns it was deleted), so an
        export can hold them. Never a memory of another workspace."""
        unknown = {memory_id for _, _, memory_id in self.default_mounts} - set(self.memories)
        foreign = set(
            Memory.objects.filter(pk__in=unknown)
            .exclude(workspace_id=self.workspace_id)
            .values_list("pk", flat=True)
        )

        def refuse(where: str, memory_id: str) -> Callable[[], None]:
            def check_mount() -> None:
                raise ApiError(422, f"{where} {memory_id} names a memory of another workspace")

            return check_mount

        return [
            (number, refuse(where, memory_id))
            for number, where, memory_id in self.default_mounts
            if memory_id in foreign
        ]

    def _stored_providers(self) -> None:
        """A provider that exists is left as it is: its memories' namespaces are checked
        on the backend its stored row names (the file's copy is the same, or refused)."""
        found = self.known.found["memory_provider"]
        for provider in MemoryProvider.objects.filter(pk__in=found):
            self.providers[provider.pk] = _Provider(provider.type, namespaces.key_of(provider))

    def _new_memories(self) -> list[tuple[str, _Memory]]:
        found = self.known.found["memory"]
        return [(mid, memory) for mid, memory in self.memories.items() if mid not in found]

    def _provider_check(self, memory_id: str, memory: _Memory) -> Callable[[], None]:
        """A record memory's provider is one of the file's, of its type; its namespace is
        no other memory's on that backend: in the file, nor (for a new memory) any
        workspace's, as creating one checks (records.kind.prepare_create)."""

        def check_provider() -> None:
            if memory.provider_id is None or memory.namespace is None:  # (both, or neither)
                return
            provider = self.providers.get(memory.provider_id)
            if provider is None:
                raise ApiError(
                    422,
                    f"memory {memory_id}: provider_id {memory.provider_id} names no memory"
                    " provider of this file's workspace",
                )
            if provider.type != memory.type:
                raise ApiError(422, f"memory {memory_id}: type must be its provider's type")
            claimed = self.namespaces.setdefault((provider.backend, memory.namespace), memory_id)
            if claimed != memory_id:
                raise ApiError(422, f"memory {memory_id}: memory {claimed} uses its namespace")
            if memory_id not in self.known.found["memory"]:
                try:
                    namespaces.refuse_taken(provider.backend, [memory.namespace])
                except ApiError as error:
                    raise ApiError(422, f"memory {memory_id}: {error.message}") from None

        return check_provider

    def _counted(self) -> list[tuple[tuple[str, str], int]]:
        memories = set(self.fact_counts) | set(self.counters)
        return [(m, self.counters.get(m, [0, self.agents[m[0]]])[1]) for m in sorted(memories)]

    def _facts_check(self, memory: tuple[str, str], line: int) -> Callable[[], None]:
        """The counter of a new facts memory (the limit reads it) counts its facts."""

        def check_counter() -> None:
            counted = self.counters.get(memory, [0])[0]
            if counted != self.fact_counts[memory]:
                agent_id, scope = memory
                raise ApiError(
                    422,
                    f"the fact counter of agent {agent_id}{f' (scope {scope})' if scope else ''}"
                    f" says {counted} facts; the file holds {self.fact_counts[memory]}"
                    " (verify --repair mends counters before an export)",
                )

        return check_counter


def _within_total(memory: _Memory) -> None:
    """A file memory's files and history fit ``memory.max_total_bytes``, as writes keep them
    (a write over it is refused; older revisions are pruned to make room)."""
    limit = setting("memory.max_total_bytes")
    if memory.content_bytes + memory.history_bytes > limit:
        raise ApiError(422, f"the memory's files and history take more than {limit} bytes")


def _counters_check(memory_id: str, memory: _Memory) -> Callable[[], None]:
    """A new memory's byte counters (the limits read them) count what the file holds."""

    def check_counters() -> None:
        _within_total(memory)
        real = (memory.files, memory.content_bytes, memory.history_bytes)
        if memory.stated != real:
            raise ApiError(
                422,
                f"memory {memory_id} says file_count, content_bytes, history_bytes are"
                f" {memory.stated}; its files and revisions in the file make {real}"
                " (verify --repair mends counters before an export)",
            )

    return check_counters


class _InDatabase:
    """The file's rows that are in the database already, found a batch at a time.

    Such a row is left as it is, so it must be the same row: the same workspace and
    parents (an id of another workspace, or an id an installation's sequence gave another
    row, would otherwise bind the file's rows to someone else's).
    """

    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.kind = ""
        self.pending: list[tuple[int, rows.Values]] = []
        self.found: dict[str, set] = defaultdict(set)

    def add(self, number: int, kind: str, values: rows.Values) -> None:
        self.kind = kind
        self.pending.append((number, values))
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        kind, pending, self.pending = self.kind, self.pending, []
        if not pending:
            return
        columns = IDENTITY[kind]
        stored = {
            row[0]: row[1:]
            for row in MODELS[kind]
            ._default_manager.filter(pk__in=[values["id"] for _, values in pending])
            .values_list("pk", *columns)
        }
        for number, values in pending:
            held = stored.get(values["id"])
            if held is None:
                continue
            for column, value in zip(columns, held, strict=True):
                if value != values[column]:
                    raise Refused(_not_the_same(number, kind, values["id"], column, value))
            self.found[kind].add(values["id"])
        if kind == "end_user":
            self._same_people(pending)

    def _same_people(self, pending: list[tuple[int, rows.Values]]) -> None:
        """An end user's id is one per person and workspace (``end_user_unique``)."""
        by_external_id = {values["external_id"]: (number, values) for number, values in pending}
        others = (
            EndUser.objects.filter(
                workspace_id=self.workspace_id, external_id__in=list(by_external_id)
            )
            .exclude(pk__in=[values["id"] for _, values in pending])
            .values_list("external_id", "pk")
        )
        for external_id, pk in others.order_by("external_id")[:1]:
            number, values = by_external_id[external_id]
            raise Refused(
                f"line {number}: end_user {values['id']}: end user {external_id} exists"
                f" already in this workspace as {pk}"
            )


def _not_the_same(number: int, kind: str, pk: object, column: str, value: object) -> str:
    if column == "workspace_id":
        return f"line {number}: {kind} {pk} exists already, in another workspace"
    return (
        f"line {number}: {kind} {pk} exists already with another {column} ({value}):"
        " import into a database this row is not in"
    )
