"""The content-addressed result cache: keys, round trips, concurrency, and that a hit skips the sandbox."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from verifier.cache import LOWERING_REVISION, ResultCache, cache_key, toolchain_versions
from verifier.result import Outcome, TimingStats, VerificationResult

VERSIONS = {"tvm": "0.27.0", "tvm_ffi": "0.1.14", "steptp": "0.1.0", "lowering": "2"}


def _key(**overrides):
    parts = dict(program_hash="p" * 64, parent_hash=None, target="llvm", seed=0, special_values=False,
                 versions=VERSIONS)
    parts.update(overrides)
    return cache_key(**parts)


def test_key_depends_on_every_component():
    base = _key()
    variants = [
        _key(program_hash="q" * 64), _key(parent_hash="a" * 64), _key(target="cuda"), _key(seed=1),
        _key(special_values=True), _key(versions={**VERSIONS, "tvm": "0.28.0"}),
        _key(versions={**VERSIONS, "tvm_ffi": "0.2"}), _key(versions={**VERSIONS, "steptp": "0.2"}),
        _key(versions={**VERSIONS, "lowering": "3"}),
        _key(reference="torch:abc"), _key(params_digest="d"), _key(timed=True),
    ]
    assert base == _key()
    assert len({base, *variants}) == len(variants) + 1


def test_versions_come_from_package_metadata():
    versions = toolchain_versions()
    assert versions["tvm"].startswith("0.27")
    assert set(versions) == {"tvm", "tvm_ffi", "steptp", "lowering"}
    assert versions["lowering"] == str(LOWERING_REVISION)


def test_round_trip_marks_hits(tmp_path: Path):
    cache = ResultCache(tmp_path)
    result = VerificationResult(Outcome.PASS, program_hash="p", max_abs_error=1e-13, max_rel_error=2e-12,
                                timing=TimingStats(1e-3, 1e-5, 2e-5, 1e-3, 10, 7, [1e-3] * 7),
                                notes=["n"], versions=VERSIONS)
    key = _key()
    assert cache.get(key) is None
    assert cache.put(key, result)
    hit = cache.get(key)
    assert hit is not None and hit.cache_hit
    assert hit.outcome is Outcome.PASS
    assert hit.timing == result.timing
    hit.cache_hit = False
    assert hit == result
    assert not result.cache_hit  # the caller's object is never flagged
    # a second cache object on the same directory sees it (another process would too)
    assert ResultCache(tmp_path).get(key).outcome is Outcome.PASS


def test_limit_dependent_outcomes_are_not_cached(tmp_path: Path):
    cache = ResultCache(tmp_path)
    assert not cache.put(_key(), VerificationResult(Outcome.TIMEOUT))
    assert not cache.put(_key(), VerificationResult(Outcome.MEMORY_LIMIT))
    assert cache.get(_key()) is None
    assert cache.put(_key(seed=3), VerificationResult(Outcome.CRASH, error="worker killed by SIGSEGV"))
    assert cache.get(_key(seed=3)).outcome is Outcome.CRASH


def test_concurrent_writers_and_readers(tmp_path: Path):
    cache = ResultCache(tmp_path)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            local = ResultCache(tmp_path)
            for j in range(25):
                key = _key(seed=index * 100 + j)
                local.put(key, VerificationResult(Outcome.PASS, seed=index * 100 + j))
                assert local.get(key).seed == index * 100 + j
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(cache) == 100


def test_default_directory_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "c"))
    cache = ResultCache()
    assert cache.path == tmp_path / "c" / "results.sqlite"
    assert cache.path.exists()
