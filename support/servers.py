"""The servers of the production setup for the deploy tests and the slow-clients benchmark:
Debian's nginx with ``deploy/nginx.conf``, and reading what a server answers on a raw
socket."""

from __future__ import annotations

import datetime
import http.client
import io
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from memoryhub.embedded import free_port
from memoryhub.errors import ApiError
from support.workers import tests_database_url as database_url

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
# The README's production command (the tests add --workers and --bind).
GUNICORN = ["-c", "python:memoryhub.gunicorn_conf", "memoryhub.wsgi"]
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def server_environment() -> dict[str, str]:
    """For a server on the test database (the tests' settings, no Redis: a test broker)."""
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update(
        MEMORYHUB_ENV="test",
        DJANGO_SETTINGS_MODULE="memoryhub.settings",
        DATABASE_URL=database_url(),
        PYTHONPATH=str(ROOT),  # this checkout's code
    )
    return environ


def nginx_prefix() -> Path:
    """A folder for nginx's files. Not under pytest's own temporary folder: nginx's workers
    (another user when started as root) must reach their temporary files."""
    prefix = Path(tempfile.mkdtemp(prefix="memoryhub-nginx-"))
    prefix.chmod(0o755)
    return prefix


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key, made as the README's openssl
    command makes one (an RSA key, a year): the paths of both files."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "memoryhub.crt", folder / "memoryhub.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def start_nginx(
    prefix: Path, port: int, web: int, mcp: int, tls_port: int | None = None
) -> subprocess.Popen:
    """nginx in the foreground with the shipped server block, only its ports changed (plain
    HTTP on ``port``, HTTPS on ``tls_port``) and its certificate one made for 127.0.0.1
    (``prefix/memoryhub.crt``, which a client may trust)."""
    server = CONF.read_text()
    cert, key = self_signed_certificate(prefix)
    for old, new in (
        ("listen 80;", f"listen 127.0.0.1:{port};"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{tls_port or free_port()} ssl;"),
        ("/etc/nginx/ssl/memoryhub.crt", str(cert)),
        ("/etc/nginx/ssl/memoryhub.key", str(key)),
        ("127.0.0.1:8000", f"127.0.0.1:{web}"),
        ("127.0.0.1:8001", f"127.0.0.1:{mcp}"),
    ):
        assert old in server, old
        server = server.replace(old, new)
    (prefix / "memoryhub.conf").write_text(server)
    temp = "".join(f"{kind}_temp_path {prefix}/{kind};\n" for kind in TEMP_PATHS)
    (prefix / "nginx.conf").write_text(
        f"worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\naccess_log off;\n{temp}include {prefix}/memoryhub.conf;\n}}\n"
    )
    return subprocess.Popen(  # noqa: S603 - Debian's nginx, our configuration
        [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def read_all(conn: socket.socket) -> bytes:
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data


class _Received:
    """What a server sent, for http.client to parse (chunked bodies included)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, *args, **kwargs) -> io.BytesIO:
        return io.BytesIO(self.data)


def answer(raw: bytes) -> tuple[int, str, dict]:
    response = http.client.HTTPResponse(_Received(raw))  # type: ignore[arg-type]
    response.begin()
    return response.status, response.getheader("Content-Type", ""), json.loads(response.read())


def is_envelope(status: int, content_type: str, body: dict) -> bool:
    """The app's envelope for this status, word for word but the message."""
    message = body.get("error", {}).get("message", "")
    return (
        content_type.startswith("application/json") and body == ApiError(status, message).as_dict()
    )
