"""The interface every record backend implements, and the HTTP handling they share.

A backend speaks to one mem0 account over HTTP through the outbound policy's session.
Every failure becomes an :class:`~memoryhub.errors.ApiError`:

- no answer, a refused connection, a timeout, 429, 5xx, a redirect or a malformed body:
  503 ``unavailable`` with ``dependency: memory:{type}``;
- 401/403: 503 ``unavailable`` with reason ``provider_auth`` and the provider's id;
- a write whose answer never arrives (read timeout after sending, connection dropped,
  a garbled answer): 409 ``conflict`` / ``write_unconfirmed``. It is never retried.
"""

from __future__ import annotations

import builtins
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
from urllib3.exceptions import NewConnectionError

from memoryhub import outbound
from memoryhub.errors import ApiError
from memoryhub.parsers import parse_json_bytes
from memoryhub.reasons import Code, Reason

DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 30.0
# The self-hosted listing answers up to 1000 records of up to 8000 characters each.
MAX_ANSWER_BYTES = 64 * 1024 * 1024


@dataclass
class Record:
    id: str
    text: str
    metadata: dict = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = None
    namespace: str | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.score is not None:
            data["score"] = self.score
        return data


@dataclass
class Page:
    records: list[Record]
    count: int


@dataclass
class Answer:
    status: int
    data: Any


def canonical_record_id(record_id: object) -> str | None:
    """mem0's record ids are UUIDs; anything else names no record."""
    if not isinstance(record_id, str) or len(record_id) > 64:
        return None
    try:
        return str(uuid.UUID(record_id))
    except ValueError:
        return None


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return None


def _timestamp(value: Any) -> str | None:
    """An ISO 8601 timestamp in UTC with a Z, whatever offset the backend used."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")
    except (ValueError, OverflowError):  # OverflowError: out of range once in UTC
        return None


class AnswerTooLarge(Exception):
    pass


def _read_capped(response: requests.Response) -> bytes:
    """The answer's body, refusing one over MAX_ANSWER_BYTES (a provider is not trusted)."""
    chunks, size = [], 0
    for chunk in response.iter_content(chunk_size=64 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise AnswerTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def _never_sent(exc: requests.ConnectionError) -> bool:
    """Whether a connection error happened before the request left (no connection made)."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, NewConnectionError)


class RecordBackend:
    """One mem0 account. Subclasses implement the paths; this class the error rules."""

    type: str = ""
    # Both APIs add and search with the same bodies, at these paths.
    add_path: str = ""
    search_path: str = ""
    record_path: str = ""  # one record, "{id}" for its id

    def __init__(
        self,
        *,
        provider_id: str,
        base_url: str,
        credential: dict | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
    ) -> None:
        self.provider_id = provider_id
        self.base_url = base_url.rstrip("/")
        self.credential = credential or {}
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.http = outbound.session()

    # --- the interface ----------------------------------------------------------------

    def add(self, namespace: str, text: str, metadata: dict) -> Record:
        # infer=false stores the text verbatim and answers synchronously with the new id.
        answer = self.request(
            "POST",
            self.add_path,
            write=True,
            json={
                "messages": [{"role": "user", "content": text}],
                "user_id": namespace,
                "metadata": metadata,
                "infer": False,
            },
        )
        if answer.status >= 300:
            raise self.unavailable(f"it refused the record (HTTP {answer.status})")
        return self.after_add(namespace, self.added_id(answer), text, metadata)

    def search(
        self, namespace: str, query: str, k: int, *, timeout: float | None = None
    ) -> list[Record]:
        answer = self.request(
            "POST",
            self.search_path,
            json={"query": query, "filters": {"user_id": namespace}, "top_k": k},
            timeout=timeout,
        )
        if answer.status >= 300:
            raise self.unavailable(f"it refused the search (HTTP {answer.status})")
        return [self.record_of(item) for item in self.results_of(answer)][:k]

    def list(self, namespace: str, *, limit: int, offset: int) -> Page:
        raise NotImplementedError

    def get(self, namespace: str, record_id: str) -> Record | None:
        raise NotImplementedError

    def update(
        self, namespace: str, record_id: str, *, text: str | None, metadata: dict | None
    ) -> Record:
        raise NotImplementedError

    def delete(self, namespace: str, record_id: str) -> None:
        existing = self._existing(namespace, record_id).id
        answer = self.request("DELETE", self.record_path.format(id=existing), write=True)
        if answer.status == 404:
            raise self.not_found()
        if answer.status >= 300:
            raise self.unavailable(f"it refused the deletion (HTTP {answer.status})")

    def _existing(self, namespace: str, record_id: str) -> Record:
        """The record, if it exists in this namespace (404 otherwise)."""
        record = self.get(namespace, record_id)
        if record is None:
            raise self.not_found()
        return record

    def delete_namespace(self, namespace: str) -> None:
        raise NotImplementedError

    def test(self, namespace: str) -> None:
        """Checks the address and credential by listing one page; changes nothing."""
        self.list(namespace, limit=1, offset=0)

    def close(self) -> None:
        self.http.close()

    # --- shared helpers --------------------------------------------------------------

    def headers(self, *, admin: bool = False) -> dict[str, str]:
        return {}

    def unavailable(self, message: str, reason: Reason | None = None) -> ApiError:
        return ApiError(
            503,
            f"the memory provider {self.provider_id} cannot answer: {message}",
            code=Code.UNAVAILABLE,
            reason=reason,
            dependency=f"memory:{self.type}",
        )

    def unconfirmed(self) -> ApiError:
        return ApiError(
            409,
            "the memory backend did not confirm the write: it may or may not have happened;"
            " list or search the records before trying again",
            reason=Reason.WRITE_UNCONFIRMED,
            dependency=f"memory:{self.type}",
        )

    def not_found(self) -> ApiError:
        return ApiError(404, "record not found")

    def request(
        self,
        method: str,
        path: str,
        *,
        write: bool = False,
        json: Any = None,
        params: dict | None = None,
        admin: bool = False,
        timeout: float | None = None,
    ) -> Answer:
        """Send one request; 2xx, 400 and 404 answers come back, everything else raises."""
        read_timeout = self.read_timeout if timeout is None else timeout
        connect_timeout = min(self.connect_timeout, read_timeout)
        try:
            response = self.http.request(
                method,
                self.base_url + path,
                json=json,
                params=params,
                headers=self.headers(admin=admin),
                timeout=(connect_timeout, read_timeout),
                stream=True,
            )
            try:
                content = _read_capped(response)
            finally:
                response.close()
        except outbound.OutboundRefused as exc:
            raise self.unavailable(str(exc), reason=Reason.OUTBOUND_REFUSED) from None
        except requests.ConnectTimeout:
            raise self.unavailable("the connection timed out") from None
        except requests.ReadTimeout:
            if write:
                raise self.unconfirmed() from None
            raise self.unavailable("the answer timed out") from None
        except requests.ConnectionError as exc:
            if write and not _never_sent(exc):
                raise self.unconfirmed() from None
            raise self.unavailable("the connection failed") from None
        except (requests.RequestException, AnswerTooLarge):
            if write:
                raise self.unconfirmed() from None
            raise self.unavailable("the answer could not be read") from None
        return self._answer(response.status_code, content, write)

    def _answer(self, status: int, content: bytes, write: bool) -> Answer:
        if status in (401, 403):
            raise ApiError(
                503,
                f"the memory provider {self.provider_id} refused its credential"
                f" (HTTP {status}); check the provider's api key",
                code=Code.UNAVAILABLE,
                reason=Reason.PROVIDER_AUTH,
                dependency=f"memory:{self.type}",
                provider_id=self.provider_id,
            )
        if 300 <= status < 400:
            raise self.unavailable(f"it answered a redirect (HTTP {status}), which is not followed")
        if status == 429:
            raise self.unavailable("it is rate limiting (HTTP 429)", reason=Reason.RATE_LIMITED)
        if status >= 500:
            raise self.unavailable(f"it failed (HTTP {status})")
        if status not in (400, 404) and status >= 300:
            raise self.unavailable(f"it refused the request (HTTP {status})")
        if status in (204, 205) or not content:
            return Answer(status, None)
        try:
            # The request parser's rules: no NaN/Infinity, numbers in range, no nesting too
            # deep to handle, no NUL or lone surrogates (which no answer could carry on).
            data = parse_json_bytes(content)
        except ApiError:
            if write and status < 300:
                raise self.unconfirmed() from None
            if status < 300:
                raise self.unavailable("its answer is not JSON") from None
            data = None
        return Answer(status, data)

    def malformed(self, write: bool = False) -> ApiError:
        return self.unconfirmed() if write else self.unavailable("its answer has an unknown shape")

    def record_of(self, item: Any, *, write: bool = False) -> Record:
        """A Record from one mem0 memory object (``memory`` or ``data.memory`` holds text)."""
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise self.malformed(write)
        text = item.get("memory")
        if text is None and isinstance(item.get("data"), dict):
            text = item["data"].get("memory")
        metadata = item.get("metadata")
        score = item.get("score")
        if not isinstance(text, str):
            raise self.malformed(write)
        return Record(
            id=item["id"],
            text=text,
            metadata=metadata if isinstance(metadata, dict) else {},
            created_at=_timestamp(item.get("created_at")),
            updated_at=_timestamp(item.get("updated_at") or item.get("created_at")),
            score=_score(score),
            namespace=item.get("user_id") if isinstance(item.get("user_id"), str) else None,
        )

    def results_of(self, answer: Answer, *, write: bool = False) -> builtins.list:
        data = answer.data
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return data["results"]
        raise self.malformed(write)

    def in_namespace(self, record: Record | None, namespace: str) -> Record | None:
        """A record of another namespace is not this memory's: it is not found."""
        if record is None or record.namespace != namespace:
            return None
        return record

    def added_id(self, answer: Answer) -> str:
        """The id of the record an add created."""
        results = self.results_of(answer, write=True)
        for item in results:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                return item["id"]
        if results == []:
            # mem0 de-duplicates an exact repeat of a record's text in a namespace.
            raise ApiError(
                409,
                "an identical record already exists in this memory",
                code=Code.ALREADY_EXISTS,
                reason=Reason.DUPLICATE_RECORD,
            )
        raise self.unconfirmed()

    def after_add(self, namespace: str, record_id: str, text: str, metadata: dict) -> Record:
        """The stored record after an add; what was sent when it cannot be read back."""
        try:
            record = self.get(namespace, record_id)
        except ApiError:
            record = None
        return record or Record(id=record_id, text=text, metadata=metadata, namespace=namespace)
