"""Skip on a learner's machine, fail in CI: the one rule for tests that need a toolchain."""

import os

import pytest

REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"


def need(condition: bool, reason: str) -> None:
    """Skip with the reason on a learner's machine; fail in CI, where every toolchain is required."""
    if condition:
        return
    if REQUIRE_ALL:
        pytest.fail(f"required in CI (TUTOR_REQUIRE_ALL=1): {reason}")
    pytest.skip(reason)
