"""Each tool call id of a run is executed at most once, whichever endpoint receives it.

A call is recorded in ``ToolCall`` (unique per run and id) with a digest of its name and
arguments. The same id again answers the recorded content without doing the work again;
with other arguments it is 409 ``tool_call_reused``. Two requests with one id at once meet
at the unique constraint: the loser waits for the winner's row, then answers its content.

Work that only touches the database commits with its record (``transactional``), so a
worker that dies mid-call leaves neither and a retry runs it once. Work outside the
database (a record backend) is recorded as started before it begins: a retry that finds
it started answers :data:`OUTCOME_UNKNOWN` instead of doing it twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryhub.errors import ApiError
from memoryhub.models import Run, ToolCall
from memoryhub.reasons import Reason

OUTCOME_UNKNOWN = (
    "error: outcome_unknown: an earlier attempt of this tool call did not finish, so it may "
    "or may not have happened; read the file or search the records before writing again"
)


def digest(name: str, arguments: dict, context: object = None) -> str:
    """What a call asks for; ``context`` is what else gives the arguments their meaning."""
    described = [name, arguments] if context is None else [name, arguments, context]
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def earlier_content(run: Run, call_id: str, call_digest: str) -> str | None:
    """The answer of this id's earlier attempt; None when it is new (409 if reused)."""
    earlier = ToolCall.objects.filter(run=run, call_id=call_id).first()
    if earlier is None:
        return None
    if earlier.arguments_digest != call_digest:
        raise ApiError(
            409, "this tool call id was used with other arguments", reason=Reason.TOOL_CALL_REUSED
        )
    return OUTCOME_UNKNOWN if earlier.status == ToolCall.Status.STARTED else earlier.content


def at_most_once(
    run: Run,
    call_id: str,
    name: str,
    call_digest: str,
    work: Callable[[], str],
    *,
    transactional: bool,
    arguments: dict | None = None,
) -> str:
    """``work()``'s answer for a new call id, else the first answer (see the module)."""
    found = earlier_content(run, call_id, call_digest)
    if found is not None:
        return found
    record = ToolCall(
        workspace_id=run.workspace_id,
        run=run,
        call_id=call_id,
        name=name,
        arguments_digest=call_digest,
        arguments=arguments,  # kept for staff to read what the call asked
        status=ToolCall.Status.STARTED,
    )
    try:
        if transactional:
            with transaction.atomic():
                _claim(record)
                content = work()
                _finish(record, content)
        else:
            _claim(record)
            content = work()
            _finish(record, content)
    except _Taken:
        # The same id arrived at once elsewhere and its record committed first.
        return earlier_content(run, call_id, call_digest) or OUTCOME_UNKNOWN
    return content


class _Taken(Exception):
    pass


def _claim(record: ToolCall) -> None:
    # A savepoint of its own, so only the record's clash means "taken", never the work's.
    try:
        with transaction.atomic():
            record.save(force_insert=True)
    except IntegrityError:
        raise _Taken from None


def _finish(record: ToolCall, content: str) -> None:
    record.status = ToolCall.Status.DONE
    record.content = content
    record.finished_at = timezone.now()
    record.save(update_fields=["status", "content", "finished_at"])
