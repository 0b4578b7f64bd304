"""``deploy/nginx.conf`` agrees with the app: its error bodies are the app's envelope, its
body limit is the app's largest, HTTPS answers carry HSTS and the certificate command it
documents works (tests/deploy/test_nginx.py and test_nginx_https.py run it live)."""

from __future__ import annotations

import json
import re
import subprocess
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


def _server_blocks() -> list[str]:
    return re.findall(r"^server \{\n(.*?)^\}", CONF, re.M | re.S)


def test_one_server_block_serves_https_and_plain_http():
    (server,) = _server_blocks()
    assert re.findall(r"^    listen (.*);", server, re.M) == ["443 ssl", "80"]
    assert "ssl_certificate /etc/nginx/ssl/memoryhub.crt;" in server
    assert "ssl_certificate_key /etc/nginx/ssl/memoryhub.key;" in server
    assert "ssl_protocols TLSv1.2 TLSv1.3;" in server


def test_hsts_is_sent_over_https_only_on_every_answer():
    (server,) = _server_blocks()
    assert "add_header Strict-Transport-Security $memoryhub_hsts always;" in server
    hsts = re.search(r"map \$scheme \$memoryhub_hsts \{\n(.*?)\}", CONF, re.S).group(1)
    assert re.findall(r"^\s+(\S+) (.*);", hsts, re.M) == [
        ("https", '"max-age=31536000"'),
        ("default", '""'),  # no header at all over plain HTTP
    ]
    # A location with an add_header of its own would drop the server's.
    assert CONF.count("add_header") == 1


def test_the_documented_openssl_command_makes_a_certificate(tmp_path):
    from cryptography import x509

    lines = re.search(r"^#   mkdir -p .*?\n(?:#     .*\n)+", CONF, re.M).group(0)
    command = " ".join(line.lstrip("#").strip().rstrip("\\") for line in lines.splitlines())
    command = command.replace("/etc/nginx/ssl", str(tmp_path / "ssl"))
    subprocess.run(command, shell=True, check=True, capture_output=True)  # noqa: S602
    certificate = x509.load_pem_x509_certificate((tmp_path / "ssl/memoryhub.crt").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert names.value.get_values_for_type(x509.DNSName) == ["memoryhub.example"]
    assert (tmp_path / "ssl/memoryhub.key").read_bytes().startswith(b"-----BEGIN PRIVATE KEY")
