"""``deploy/nginx.conf`` agrees with the app: its error bodies are the app's envelope and
its body limit is the app's largest (tests/deploy/test_nginx.py runs it live)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.conf import settings

from filememory.api import FileDetailView
from memoryhub.errors import ApiError

CONF = (Path(settings.BASE_DIR) / "deploy" / "nginx.conf").read_text()
BODIES = re.findall(r"return (\d{3}) '(.*)\\n';", CONF)


def test_every_error_body_is_the_apps_envelope_for_its_status():
    assert len(BODIES) >= 6
    for status, text in BODIES:
        body = json.loads(text)
        assert body == ApiError(int(status), body["error"]["message"]).as_dict(), status


def test_every_error_page_has_its_body():
    targets = re.findall(r"error_page [\d =]+(/_memoryhub/error/\d+);", CONF)
    served = {f"/_memoryhub/error/{status}" for status, _ in BODIES}
    assert targets and set(targets) <= served


def test_the_body_limit_is_the_apps_largest_body():
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert f"client_max_body_size {limit // (1024 * 1024)}m;" in CONF
    assert f"request body is larger than {limit} bytes" in CONF
    assert FileDetailView().max_body_bytes <= limit  # the largest an endpoint takes
