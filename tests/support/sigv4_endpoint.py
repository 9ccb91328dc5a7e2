"""A stand-in for API Gateway's IAM authorization on 127.0.0.1: it checks each request's SigV4 signature for
`execute-api` and answers 200 (valid) or 403 with the reason, the way the deployed API answers before the function.

The check is written here from AWS's Signature Version 4 specification (canonical request -> string to sign ->
HMAC chain), independently of botocore and curl, which are the clients under test.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "execute-api"
MAX_CLOCK_SKEW = timedelta(minutes=5)
AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r"\s*SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*Signature=(?P<signature>[0-9a-f]{64})$"
)


class Rejected(Exception):
    """The request would get API Gateway's 403: the message says why."""


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _uri_encode(text: str) -> str:
    return quote(text, safe="-_.~")


def canonical_query(raw_query: str) -> str:
    pairs = []
    for part in filter(None, raw_query.split("&")):
        name, _, value = part.partition("=")
        pairs.append((_uri_encode(unquote(name)), _uri_encode(unquote(value))))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def canonical_request(method: str, raw_path: str, raw_query: str, headers: list[tuple[str, str]],
                      signed: list[str], body: bytes) -> str:
    values: dict[str, list[str]] = {}
    for name, value in headers:
        values.setdefault(name.lower(), []).append(" ".join(value.split()))
    missing = [name for name in signed if name not in values]
    if missing:
        raise Rejected(f"signed headers not sent: {missing}")
    canonical_headers = "".join(f"{name}:{','.join(values[name])}\n" for name in signed)
    # Every service but S3 encodes the (already percent-encoded) path once more.
    canonical_uri = quote(raw_path or "/", safe="/~")
    return "\n".join([method, canonical_uri, canonical_query(raw_query), canonical_headers, ";".join(signed),
                      _sha256_hex(body)])


def signature(secret_key: str, date: str, region: str, string_to_sign: str) -> str:
    key = _hmac(("AWS4" + secret_key).encode("utf-8"), date)
    for part in (region, SERVICE, "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass
class Verdict:
    method: str
    path: str
    access_key: str = ""
    signed_headers: list[str] = field(default_factory=list)
    body: bytes = b""
    error: str = ""

    @property
    def valid(self) -> bool:
        return not self.error


def verify(method: str, target: str, headers: list[tuple[str, str]], body: bytes, secrets: dict[str, str],
           region: str, session_tokens: dict[str, str], now: datetime) -> Verdict:
    raw_path, _, raw_query = target.partition("?")
    verdict = Verdict(method, raw_path, body=body)
    lower = {name.lower(): value for name, value in headers}
    try:
        match = AUTHORIZATION.match(lower.get("authorization", ""))
        if not match:
            raise Rejected("missing or malformed AWS4-HMAC-SHA256 Authorization header")
        verdict.access_key = match["key"]
        verdict.signed_headers = match["signed"].split(";")
        if match["service"] != SERVICE or match["region"] != region:
            raise Rejected(f"signed for {match['service']} in {match['region']}, not {SERVICE} in {region}")
        if match["key"] not in secrets:
            raise Rejected("the security token included in the request is invalid (unknown access key)")
        amz_date = lower.get("x-amz-date", "")
        try:
            signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
        except ValueError:
            raise Rejected("missing or malformed X-Amz-Date") from None
        if amz_date[:8] != match["date"] or abs(now - signed_at) > MAX_CLOCK_SKEW:
            raise Rejected("signature expired or dated outside its credential scope")
        required = {"host", "x-amz-date"} | ({"x-amz-security-token"} if match["key"] in session_tokens else set())
        if not required <= set(verdict.signed_headers):
            raise Rejected(f"these headers must be signed: {sorted(required)}")
        if match["key"] in session_tokens and lower.get("x-amz-security-token") != session_tokens[match["key"]]:
            raise Rejected("wrong or missing session token")
        if "x-amz-content-sha256" in lower and lower["x-amz-content-sha256"] != _sha256_hex(body):
            raise Rejected("x-amz-content-sha256 does not match the body")
        request = canonical_request(method, raw_path, raw_query, headers, verdict.signed_headers, body)
        scope = f"{match['date']}/{region}/{SERVICE}/aws4_request"
        string_to_sign = "\n".join([ALGORITHM, amz_date, scope, _sha256_hex(request.encode("utf-8"))])
        expected = signature(secrets[match["key"]], match["date"], region, string_to_sign)
        if not hmac.compare_digest(expected, match["signature"]):
            raise Rejected("the request signature does not match")
    except Rejected as problem:
        verdict.error = str(problem)
    return verdict


class SignedEndpoint:
    """`with SignedEndpoint(secrets, region) as endpoint:` serves on endpoint.url; endpoint.verdicts lists every
    request it saw, in order."""

    def __init__(self, secrets: dict[str, str], region: str, session_tokens: dict[str, str] | None = None):
        self.secrets, self.region, self.session_tokens = secrets, region, session_tokens or {}
        self.verdicts: list[Verdict] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                verdict = verify(self.command, self.path, list(self.headers.items()), body, endpoint.secrets,
                                 endpoint.region, endpoint.session_tokens, datetime.now(timezone.utc))
                endpoint.verdicts.append(verdict)
                status, payload = (200, {"verified": True, "path": verdict.path}) if verdict.valid else (
                    403, {"message": verdict.error})
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args):  # quiet: the verdicts are the record
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SignedEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
