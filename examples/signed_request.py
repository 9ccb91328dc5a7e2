"""Call the deployed API with auth=iam (the default): every request signed with SigV4 for `execute-api`.

    python examples/signed_request.py GET  "$URL/models"
    python examples/signed_request.py POST "$URL/sentiment" --data '{"text": "What a wonderful film."}'
    python examples/signed_request.py POST "$URL/classify" --data @cat.jpg --content-type image/jpeg

Credentials come from wherever the AWS CLI finds them (environment, ~/.aws profiles, SSO, an instance or task
role); the principal needs execute-api:Invoke on the API (docs/deploy.md). The region is read from the
execute-api URL, else --region, AWS_REGION or the AWS configuration. Needs `botocore` and `requests`
(pip install botocore requests).
Prints the response body; exits 1 when the status is not 2xx.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import botocore.session
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

SERVICE = "execute-api"


def region_of(url: str) -> str | None:
    """us-east-1 from https://abc123.execute-api.us-east-1.amazonaws.com/..., else None."""
    labels = (urlsplit(url).hostname or "").split(".")
    return labels[labels.index(SERVICE) + 1] if SERVICE in labels[:-1] else None


def signed_request(method: str, url: str, body: bytes, content_type: str | None, credentials,
                   region: str) -> requests.PreparedRequest:
    """The request with SigV4 headers (Authorization, X-Amz-Date, X-Amz-Security-Token for temporary
    credentials) over the method, path, query, host, content type and a hash of the body."""
    headers = {"Content-Type": content_type} if content_type else {}
    aws_request = AWSRequest(method=method, url=url, data=body, headers=headers)
    SigV4Auth(credentials, SERVICE, region).add_auth(aws_request)
    return requests.Request(method, url, data=body, headers=dict(aws_request.headers.items())).prepare()


def read_body(data: str | None) -> bytes:
    """curl's convention: @file sends the file's bytes, anything else is sent as given."""
    if data is None:
        return b""
    return Path(data[1:]).read_bytes() if data.startswith("@") else data.encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method", choices=["GET", "POST"])
    parser.add_argument("url")
    parser.add_argument("--data", help="the body, or @file for a file's bytes")
    parser.add_argument("--content-type", default=None, help="default application/json when --data is given")
    parser.add_argument("--region", help="default: from the URL, else AWS_REGION or the AWS configuration")
    args = parser.parse_args(argv)

    session = botocore.session.get_session()
    credentials = session.get_credentials()
    if credentials is None:
        parser.error("no AWS credentials found (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID/SECRET)")
    # botocore's own region setting ignores AWS_REGION, which the AWS CLI v2 and the docs' commands use.
    region = args.region or region_of(args.url) or os.environ.get("AWS_REGION") or session.get_config_variable("region")
    if not region:
        parser.error("no region: pass --region or use the execute-api URL")
    content_type = args.content_type or ("application/json" if args.data is not None else None)
    request = signed_request(args.method, args.url, read_body(args.data), content_type, credentials, region)
    with requests.Session() as http:
        response = http.send(request, timeout=60)
    sys.stdout.write(response.text + ("\n" if not response.text.endswith("\n") else ""))
    return 0 if response.ok else 1


if __name__ == "__main__":
    sys.exit(main())
