"""docs/strategies.md is generated from the registry; this fails when the committed file is stale."""

from __future__ import annotations

import pytest

from steptp_cli.strategy_docs import DOCS_FILE, markdown
from strategies import all_strategies


@pytest.mark.slow
def test_committed_strategies_doc_is_current():
    fresh = markdown()
    committed = DOCS_FILE.read_text(encoding="utf-8")
    assert committed == fresh, "docs/strategies.md is stale: run `python -m steptp_cli.strategy_docs --write`"
    for strategy in all_strategies():
        assert f"## {strategy.number}. {strategy.name}" in fresh
    assert fresh.count("Trace:") == sum(1 for s in all_strategies()) - fresh.count("No built-in workload")
