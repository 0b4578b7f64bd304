"""A self-hosted mem0 REST server (``mem0_oss``): optional ``X-API-Key``, no trailing slashes.

The server has no paging and lists at most 1000 records of a namespace, so memoryhub
pages that listing itself. Purging a namespace needs the server's admin key.
"""

from __future__ import annotations

from memoryhub.errors import ApiError
from records.backends.base import Page, Record, RecordBackend, canonical_record_id

LIST_LIMIT = 1000  # the server's ALL_MEMORIES_LIMIT


def _newest_first(record: Record) -> tuple:
    return (record.created_at or "", record.id)


class OssBackend(RecordBackend):
    type = "mem0_oss"
    add_path = "/memories"
    record_path = "/memories/{id}"
    search_path = "/search"

    def headers(self, *, admin: bool = False) -> dict[str, str]:
        key = self.credential.get("admin_api_key") if admin else None
        key = key or self.credential.get("api_key")
        return {"X-API-Key": key} if key else {}

    def list(self, namespace: str, *, limit: int, offset: int) -> Page:
        answer = self.request(
            "GET", "/memories", params={"user_id": namespace, "top_k": LIST_LIMIT}
        )
        if answer.status >= 300:
            raise self.unavailable(f"it refused the listing (HTTP {answer.status})")
        records = [self.record_of(item) for item in self.results_of(answer)]
        records.sort(key=_newest_first, reverse=True)
        return Page(records[offset : offset + limit], len(records))

    def get(self, namespace: str, record_id: str) -> Record | None:
        canonical = canonical_record_id(record_id)
        if canonical is None:
            return None
        answer = self.request("GET", f"/memories/{canonical}")
        if answer.status in (400, 404) or answer.data is None:
            return None  # the server answers 200 null for an unknown id
        return self.in_namespace(self.record_of(answer.data), namespace)

    def update(
        self, namespace: str, record_id: str, *, text: str | None, metadata: dict | None
    ) -> Record:
        before = self._existing(namespace, record_id)
        existing = before.id
        body: dict = {}
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = metadata
        answer = self.request("PUT", f"/memories/{existing}", write=True, json=body)
        if answer.status == 404:
            raise self.not_found()
        if answer.status >= 300:
            raise self.unavailable(f"it refused the change (HTTP {answer.status})")
        # The server answers only {"message"}: read the record back.
        try:
            record = self.get(namespace, existing)
        except ApiError:
            record = None
        if record is None:  # the change was confirmed; answer what it made
            before.text = before.text if text is None else text
            before.metadata = before.metadata if metadata is None else metadata
            record = before
        return record

    def delete_namespace(self, namespace: str) -> None:
        answer = self.request(
            "DELETE", "/memories", params={"user_id": namespace}, write=True, admin=True
        )
        if answer.status >= 300:
            raise self.unavailable(f"it refused the purge (HTTP {answer.status})")
