"""JSON over HTTP with retries where repeating a request is safe.

Retries are urllib3's :class:`~urllib3.util.retry.Retry` mounted on a requests session, with
backoff. Two sessions share the settings: ``safe`` retries connection errors, dropped
connections and 502/503/504 (reads, writes with a ``key``, tool calls with an id, which the
server executes at most once); ``once`` retries only a connection that was never made, so
a write that may have reached the server is never sent twice.
"""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from memoryhub.client.errors import error_for, no_answer

Timeout = float | tuple[float, float]
RETRY_STATUSES = (502, 503, 504)


def _session(headers: dict[str, str], retry: Retry) -> requests.Session:
    session = requests.Session()
    session.headers.update(headers)
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _retries(retries: int, backoff: float, *, safe: bool) -> Retry:
    return Retry(
        total=retries,
        connect=retries,
        read=retries if safe else False,
        status=retries if safe else 0,
        other=0,
        allowed_methods=None,  # every method: the caller decides what is safe to repeat
        status_forcelist=RETRY_STATUSES if safe else (),
        backoff_factor=backoff,
        raise_on_status=False,  # the last 5xx answer becomes an Unavailable with its envelope
    )


class Http:
    """One base URL and credential; answers parsed JSON, raises refusals by kind."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        timeout: Timeout = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.options = {"timeout": timeout, "retries": retries, "backoff": backoff}
        self._safe = _session(headers, _retries(retries, backoff, safe=True))
        self._once = _session(headers, _retries(retries, backoff, safe=False))

    def close(self) -> None:
        self._safe.close()
        self._once.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        safe: bool,
        json: Any = None,
        params: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        session = self._safe if safe else self._once
        try:
            response = session.request(
                method,
                self.base_url + path,
                json=json,
                params=params,
                headers=headers,
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise no_answer(exc) from exc
        return _answer(response)


def _answer(response: requests.Response) -> Any:
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
        except (ValueError, KeyError, TypeError):
            error = {"code": "error", "message": response.text[:500]}
        raise error_for(response.status_code, error)
    if response.status_code == 204 or not response.content:
        return None
    return response.json()
