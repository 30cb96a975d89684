"""An https server on 127.0.0.1 for Client ID Metadata Documents, under a certificate authority of its own (made with
`cryptography`), answering each path as a test sets it: a document, a status, a delay, a body trickled byte by byte.
What it serves is trusted only by a fetcher given its CA (adapters.https: `test_loopback_ca`)."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Answer:
    """What the server answers a path: `status`, `headers` and `body`, after `delay` seconds (and once `hold` is set,
    when given), the body's bytes `trickle` seconds apart; or `raw`, written as it is (status line, headers and
    framing of the test's own)."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0
    hold: threading.Event | None = None
    raw: bytes | None = None


# The longest a held answer waits for its test to release it: a test that never does still ends.
HOLD_CEILING_SECONDS = 120


@dataclass
class DocumentServer:
    base: str
    ca_file: str
    answers: dict[str, Answer] = field(default_factory=dict)
    requested: list[str] = field(default_factory=list)
    # Requests whose answers wait for their `hold` now, under `changed` (notified at each change).
    holding: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_holding(self, count: int, timeout: float) -> bool:
        """Whether `count` requests (or more) were being held at once within `timeout` seconds."""
        with self.changed:
            return self.changed.wait_for(lambda: self.holding >= count, timeout)

    def serve(self, path: str, answer: Answer) -> str:
        """Answer `path` so from now on; its URL."""
        self.answers[path] = answer
        return f"{self.base}{path}"

    def document(self, path: str, headers: dict[str, str] | None = None, **fields: Any) -> str:
        """Serve at `path` a client metadata document naming its own URL as its client_id (unless `fields` name
        another), with `fields`; its URL."""
        url = f"{self.base}{path}"
        body = json.dumps({"client_id": url, **fields}).encode()
        return self.serve(path, Answer(body, headers={"Content-Type": "application/json", **(headers or {})}))


@dataclass(frozen=True)
class Authority:
    """A certificate authority of a test's own: its certificate (PEM, as a fetcher's CA file) and key."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def write(self, path: Path) -> str:
        path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        return str(path)


def new_authority(name: str = "agent-memory test CA") -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (
        _builder(subject, subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(certificate_signing=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Authority(certificate, key)


def _server_certificate(authority: Authority, directory: Path) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and localhost, signed by `authority`: its PEM file and its key's."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    authority_key = x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.key.public_key())
    certificate = (
        _builder(subject, authority.certificate.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(certificate_signing=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(authority_key, critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(authority.key, hashes.SHA256())
    )
    certificate_file, key_file = directory / "server.pem", directory / "server.key"
    certificate_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(certificate_file), str(key_file)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def _key_usage(*, certificate_signing: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not certificate_signing,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=certificate_signing,
        crl_sign=certificate_signing,
        encipher_only=False,
        decipher_only=False,
    )


@contextmanager
def document_server(directory: Path) -> Iterator[DocumentServer]:
    """An https DocumentServer on a free loopback port while the block runs, its CA's certificate in `directory`."""
    authority = new_authority()
    certificate, key = _server_certificate(authority, directory)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(certificate, key)
    httpd = _Server(("127.0.0.1", 0), _Handler, tls)
    state = DocumentServer(f"https://127.0.0.1:{httpd.server_address[1]}", authority.write(directory / "ca.pem"))
    httpd.state = state
    thread = threading.Thread(target=httpd.serve_forever, name="document-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: DocumentServer

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext) -> None:
        super().__init__(address, handler)
        self.tls = tls

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The handshake in the request's own thread: a client that never completes one holds up no other.
        try:
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client refusing this CA hangs up during the handshake
        with wrapped:  # the server closes the plain socket it accepted, which the TLS one replaced
            super().finish_request(wrapped, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        state = self.server.state
        state.requested.append(self.path)
        answer = state.answers.get(self.path, Answer(b"not found", 404))
        time.sleep(answer.delay)
        if answer.hold is not None:
            self._held(state, answer.hold)
        if answer.raw is not None:
            self._write(answer.raw)
            self.close_connection = True
            return
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        try:
            if answer.trickle:
                for byte in answer.body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(answer.trickle)
            else:
                self.wfile.write(answer.body)
        except OSError:  # ssl.SSLError and TimeoutError among them
            pass  # the fetcher gave up and closed: nothing more to send

    def _held(self, state: DocumentServer, hold: threading.Event) -> None:
        with state.changed:
            state.holding += 1
            state.changed.notify_all()
        try:
            hold.wait(HOLD_CEILING_SECONDS)
        finally:
            with state.changed:
                state.holding -= 1
                state.changed.notify_all()

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # the fetcher gave up and closed
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass
