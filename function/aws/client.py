"""What every AWS client here is made of: an endpoint, the region and credentials Lambda's environment gives, the
one SigV4 signer (sigv4.py) and one HTTP transport (transport.py). The S3 and DynamoDB clients add their calls."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import ClassVar

from function.aws.sigv4 import Credentials, credentials_from_environment, region_from_environment, sign
from function.aws.transport import Endpoint, HttpTransport


class AwsClient:
    service: ClassVar[str]  # SigV4's name of the service: "s3", "dynamodb"

    def __init__(self, endpoint: Endpoint, region: str, credentials: Credentials, transport: HttpTransport) -> None:
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.transport = transport

    @staticmethod
    def resolve_endpoint(region: str, environ: Mapping[str, str] | None = None) -> Endpoint:
        raise NotImplementedError

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, **settings):
        """Region, credentials and endpoint from the environment Lambda provides; `settings` are the client's."""
        region = region_from_environment(environ)
        return cls(cls.resolve_endpoint(region, environ), region, credentials_from_environment(environ), **settings)

    def signed(self, method: str, path: str, headers: Mapping[str, str], body: bytes,
               query: Mapping[str, str] | None = None) -> dict[str, str]:
        """`headers` (Host among them) with what SigV4 adds, signed now."""
        return {**headers, **sign(method, path, headers, body, self.credentials, self.region,
                                  datetime.now(timezone.utc), self.service, query)}

    def close(self) -> None:
        """Drops this thread's connections; the next call opens new ones."""
        self.transport.close()

    def renew_credentials(self, environ: Mapping[str, str] | None = None) -> None:
        """Reads the credentials again (a SnapStart copy restored later must not sign with the snapshot's)."""
        self.credentials = credentials_from_environment(environ)
