"""Test-session set-up: one run cache per pytest session.

Without ``$HGUTILS_CACHE`` the library caches zoos, learning-rate searches and comparison runs under
``<repo>/.cache``; tests would then read what an earlier local test run (or a notebook run) left there,
and a test that counts training calls passes on CI's fresh clone but fails on a second local run. Each
session gets its own temporary cache instead, so a local run sees what CI sees. Tests that need a fresh
cache of their own still set ``HGUTILS_CACHE`` themselves.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _session_run_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HGUTILS_CACHE", str(tmp_path_factory.mktemp("hgutils-cache")))
        yield
