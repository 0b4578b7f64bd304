"""Writing facts: save, replace (a new version), idempotency keys, the per-memory limit,
and delete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from facts import models as fact_models
from facts import paths, search, shards, validation
from facts.models import FACT_ID_PREFIX, Fact, FactVersion, WrittenBy
from facts.paths import Folder
from facts.scope import FactScope, is_under
from memoryhub import audit, prepared, rows
from memoryhub.conf import setting
from memoryhub.errors import ApiError
from memoryhub.models import AuditEvent, Permission, Run
from memoryhub.principals import Principal
from memoryhub.reasons import Reason

KEY_CONSTRAINT = "fact_key_unique_per_run"
CORRECTED_FIELDS = (
    "version", "text", "search_text", "tags", "confidence", "run_id", "written_by", "author",
    "updated_at",
)  # fmt: skip
PKEY_CONSTRAINT = "facts_fact_pkey"
_RUNNING_SQL = f"""
SELECT id FROM {Run._meta.db_table} WHERE id = ANY(%s::text[]) AND status = %s
ORDER BY id FOR SHARE
"""  # noqa: S608 - the model's table


@dataclass
class Written:
    version: FactVersion
    created_at: Any  # the fact's creation time
    created: bool  # False when the key had already been written in this run


@dataclass
class _Request:
    folder: Folder
    text: str
    tags: list[str] | None
    confidence: float | None
    replaces: int | None
    key: str | None
    written_by: str
    clashed: bool = False  # a drawn id was taken once already


def write_fact(
    principal: Principal,
    scope: FactScope,
    *,
    path: str,
    text: str,
    tags: list[str] | None = None,
    confidence: float | None = None,
    replaces: int | None = None,
    key: str | None = None,
    written_by: str = WrittenBy.CODE,
    within: list[Folder] | None = None,
) -> Written:
    """Save a fact, or a new version of one (``replaces``, a fact's pk).

    The values are checked already (``facts.serializers``); here the path is resolved for the
    caller. ``tags`` and ``confidence`` left out (None) are none and 1.0, or kept by
    ``replaces``. ``within`` confines the model's tools to their folders.
    """
    principal.require(Permission.RUN)
    request = _Request(
        paths.resolve_for_write(path, scope.viewer),
        text,
        tags,
        confidence,
        replaces,
        key,
        written_by,
    )
    if within is not None and not is_under(request.folder.path, within):
        raise ApiError(403, "this path is outside the tool's folders", reason=Reason.OUTSIDE_PATHS)
    if request.key and (earlier := _replay(scope, request.key)):
        return earlier
    exact = False  # the limit counted exactly, every shard held: only near it
    while True:
        try:
            return _write(principal, scope, request, within, exact=exact)
        except shards.NearTheLimit:
            exact = True
        except IntegrityError as exc:
            constraint = _constraint(exc)
            if request.key and constraint == KEY_CONSTRAINT:
                earlier = _replay(scope, request.key)
                if earlier:
                    return earlier
            # A new fact's random id taken (about 1 in a million among a billion facts):
            # once more with another.
            if constraint != PKEY_CONSTRAINT or request.clashed:
                raise
            request.clashed = True


def _write(
    principal: Principal,
    scope: FactScope,
    request: _Request,
    within: list[Folder] | None,
    *,
    exact: bool,
) -> Written:
    """One attempt, in one transaction (a savepoint inside a caller's)."""
    with transaction.atomic():
        if request.replaces is not None:
            _lock_running_runs(scope)
            return _replace(principal, scope, request, request.replaces, within)
        return _create(principal, scope, request, exact=exact)


def _write_event(principal: Principal, version: FactVersion) -> AuditEvent:
    return audit.event(
        principal,
        "fact.write",
        "fact",
        f"{FACT_ID_PREFIX}{version.fact_id}",
        path=version.path,
        version=version.version,
    )


def correct_fact(
    principal: Principal,
    scope: FactScope,
    fact_id: str,
    *,
    text: str,
    tags: list[str] | None = None,
    confidence: float | None = None,
) -> FactVersion:
    """A person's correction (staff in the panel): a new version in the same folder, written
    by ``person`` and naming them (``author``), in no run. Checked values; ``tags`` and
    ``confidence`` left out (None) are kept."""
    principal.require(Permission.WRITE)
    if principal.kind != "staff":
        raise ApiError(403, "only a person corrects a fact outside a run")
    pk = _pk_or_404(fact_id)
    with transaction.atomic():
        fact = scope.facts().select_for_update().filter(pk=pk).first()
        if fact is None:
            raise ApiError(404, "fact not found")
        fact.version += 1
        fact.text = text
        fact.search_text = search.fold(text)
        if tags is not None:
            fact.tags = tags
        if confidence is not None:
            fact.confidence = confidence
        fact.run_id, fact.written_by, fact.author = "", WrittenBy.PERSON, principal.id
        fact.updated_at = timezone.now()
        fact.save(update_fields=[*CORRECTED_FIELDS])
        version = _version_of(fact, None)
        event = audit.event(
            principal, "fact.correct", "fact", fact.public_id, path=fact.path, version=fact.version
        )
        rows.insert(version, event)
    return version


def delete_fact(
    principal: Principal, scope: FactScope, fact_id: str, *, within: list[Folder] | None = None
) -> None:
    """Delete a fact and all its versions (404 for a fact the caller can't see)."""
    principal.require(Permission.RUN if scope.run is not None else Permission.WRITE)
    pk = _pk_or_404(fact_id)
    with transaction.atomic():
        _lock_running_runs(scope)
        fact = scope.facts().select_for_update().filter(pk=pk).first()
        if fact is None or (within is not None and not is_under(fact.path, within)):
            raise ApiError(404, "fact not found")
        # The versions go with it: ON DELETE CASCADE in the database.
        Fact.objects.filter(pk=pk).delete()
        shards.add(scope.memory, -1)  # in the shard the delete's trigger took
        audit.record(principal, "fact.delete", "fact", fact.public_id, path=fact.path)


def _run(scope: FactScope) -> Run:
    """The run a fact is written in: a run's scope (facts.scope.for_run) always has one."""
    if scope.run is None:
        raise ApiError(401, "a run token is required", headers={"WWW-Authenticate": "Bearer"})
    return scope.run


def _replay(scope: FactScope, key: str) -> Written | None:
    earlier = (
        FactVersion.objects.select_related("fact")
        .filter(run_id=_run(scope).id, key=key, agent_id=scope.agent_id)
        .first()
    )
    if earlier is None:
        return None
    return Written(earlier, earlier.fact.created_at, created=False)


def _lock_running_runs(scope: FactScope) -> None:
    """Hold the run (and its eval root) running until this write commits.

    FOR SHARE conflicts with ending the run and with erasing its end user, so a write either
    lands before them (and they see it) or after them (and is refused).
    """
    if scope.run is not None:
        _check_running(scope, prepared.fetch_all(*_locking_running_runs(scope)))


def _locking_running_runs(scope: FactScope) -> tuple[str, list]:
    run_ids = sorted({_run(scope).id, scope.scope} - {""})
    return _RUNNING_SQL, [run_ids, Run.Status.RUNNING]


def _check_running(scope: FactScope, rows: list[tuple]) -> None:
    running = {row[0] for row in rows}
    if _run(scope).id not in running:
        raise ApiError(401, "the run has ended", reason=Reason.RUN_ENDED)
    if scope.scope and scope.scope not in running:
        raise ApiError(409, "the eval's root run has ended", reason=Reason.EVAL_ENDED)


def _create(principal: Principal, scope: FactScope, request: _Request, *, exact: bool) -> Written:
    # The run held, then the count: it takes the shard the fact's statistics go to (near
    # the limit all of them). Usually both in the transaction's first round trip.
    limit, taken = setting("facts.max_facts_per_agent"), None
    if exact:
        _lock_running_runs(scope)
    else:
        running, taken = prepared.fetch_together(
            _locking_running_runs(scope), shards.taking_one(scope.memory)
        )
        _check_running(scope, running)
    shards.count_one_more(scope.memory, scope.workspace_id, limit, exact=exact, taken=taken)
    now = timezone.now()
    fact = Fact(
        id=fact_models.new_fact_id(),  # looked up here, so tests can force a clash
        workspace_id=scope.workspace_id,
        agent_id=scope.agent_id,
        scope=scope.scope,
        owner_id=request.folder.owner_id,
        path=request.folder.path,
        text=request.text,
        tags=request.tags or [],
        confidence=1.0 if request.confidence is None else request.confidence,
        version=1,
        run_id=_run(scope).id,
        written_by=request.written_by,
        created_at=now,
        updated_at=now,
        search_text=search.fold(request.text),
    )
    version = _version_of(fact, request.key)
    rows.insert(fact, version, _write_event(principal, version))
    return Written(version, fact.created_at, created=True)


def _constraint(exc: IntegrityError) -> str | None:
    return getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None)


def _replace(
    principal: Principal,
    scope: FactScope,
    request: _Request,
    replaces: int,
    within: list[Folder] | None,
) -> Written:
    fact = scope.facts().select_for_update().filter(pk=replaces).first()
    if fact is None or (within is not None and not is_under(fact.path, within)):
        raise ApiError(404, "the fact to replace was not found")
    if fact.owner_id != request.folder.owner_id:
        raise ApiError(
            422,
            "a fact can't be moved into, out of or between users' folders",
            reason=Reason.USER_FOLDER_MOVE,
        )
    fact.version += 1
    fact.path = request.folder.path
    fact.text = request.text
    fact.search_text = search.fold(request.text)
    if request.tags is not None:
        fact.tags = request.tags
    if request.confidence is not None:
        fact.confidence = request.confidence
    fact.run_id = _run(scope).id
    fact.written_by = request.written_by
    fact.author = ""  # a run's version: no person wrote it
    fact.updated_at = timezone.now()
    fact.save(
        update_fields=[
            "author",
            "version",
            "path",
            "text",
            "search_text",
            "tags",
            "confidence",
            "run_id",
            "written_by",
            "updated_at",
        ]
    )
    version = _version_of(fact, request.key)
    rows.insert(version, _write_event(principal, version))
    return Written(version, fact.created_at, created=True)


def _version_of(fact: Fact, key: str | None) -> FactVersion:
    """The fact's current version, unsaved."""
    return FactVersion(
        workspace_id=fact.workspace_id,
        agent_id=fact.agent_id,
        fact=fact,
        version=fact.version,
        path=fact.path,
        text=fact.text,
        tags=fact.tags,
        confidence=fact.confidence,
        run_id=fact.run_id,
        written_by=fact.written_by,
        author=fact.author,
        key=key,
        created_at=fact.updated_at,
    )


def _pk_or_404(fact_id: str) -> int:
    try:
        return validation.fact_pk(fact_id)
    except ApiError:
        raise ApiError(404, "fact not found") from None
