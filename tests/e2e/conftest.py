import pytest

from tests.support.serverless_package import Osls, Packaged


@pytest.fixture(scope="session")
def osls(tmp_path_factory) -> Osls:
    """The framework CLI for this test session (tests/support/serverless_package.py)."""
    return Osls(tmp_path_factory.mktemp("osls"))


@pytest.fixture(scope="session")
def packages(osls):
    """`packages("jwt")`: that serverless.yml variant (serverless_package.VARIANTS), packaged once per session."""
    def packaged(name: str) -> Packaged:
        return osls.variant(name)
    return packaged
