"""AWS Signature Version 4 on the standard library: the one signer every client of this function uses.

Also where credentials and the region come from: the environment Lambda provides for the execution role (the
same variables every SDK reads), so no credential chain, profile or metadata endpoint is needed there.
"""
from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote

from function.config import Env

ALGORITHM = "AWS4-HMAC-SHA256"


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: str | None = None


def credentials_from_environment(environ: Mapping[str, str] | None = None) -> Credentials:
    """Lambda always sets these for the execution role; no other credential source is needed there."""
    environ = os.environ if environ is None else environ
    access_key, secret_key = environ.get(Env.AWS_ACCESS_KEY_ID), environ.get(Env.AWS_SECRET_ACCESS_KEY)
    if not access_key or not secret_key:
        raise RuntimeError("no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set")
    return Credentials(access_key, secret_key, environ.get(Env.AWS_SESSION_TOKEN) or None)


def region_from_environment(environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    region = environ.get(Env.AWS_REGION) or environ.get(Env.AWS_DEFAULT_REGION)
    if not region:
        raise RuntimeError("no AWS region: AWS_REGION or AWS_DEFAULT_REGION must be set")
    return region


def uri_path(path: str) -> str:
    """The path as sent and as signed: each segment URI-encoded once, "/" kept (S3's rule; the other services
    this function calls use the path "/", where every rule agrees)."""
    return quote(path, safe="/~")


def query_string(query: Mapping[str, str] | None) -> str:
    """The canonical query string, which is also what is sent: names and values URI-encoded, sorted by name."""
    pairs = sorted((quote(name, safe="-_.~"), quote(value, safe="-_.~")) for name, value in (query or {}).items())
    return "&".join(f"{name}={value}" for name, value in pairs)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def sign(method: str, path: str, headers: Mapping[str, str], body: bytes, credentials: Credentials, region: str,
         when: datetime, service: str, query: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers SigV4 adds to a request: X-Amz-Date, X-Amz-Security-Token (with a session token), Authorization.

    Every header given is signed (they must include Host; S3 also needs x-amz-content-sha256). `path` is the
    unencoded path. Steps of the spec: canonical request -> string to sign -> signing key derived from the secret,
    date, region and service -> HMAC of the string to sign.
    """
    amz_date = when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    added = {"X-Amz-Date": amz_date}
    if credentials.token:
        added["X-Amz-Security-Token"] = credentials.token
    # Header names lowercased, values trimmed with inner runs of spaces folded, sorted by name.
    canonical = sorted((name.lower().strip(), " ".join(str(value).split()))
                       for name, value in {**headers, **added}.items())
    signed_headers = ";".join(name for name, _ in canonical)
    canonical_request = "\n".join([
        method,
        uri_path(path),
        query_string(query),
        "".join(f"{name}:{value}\n" for name, value in canonical),
        signed_headers,
        hashlib.sha256(body).hexdigest(),
    ])
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = _hmac(("AWS4" + credentials.secret_key).encode("utf-8"), amz_date[:8])
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    added["Authorization"] = (f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
                              f"SignedHeaders={signed_headers}, Signature={signature}")
    return added
