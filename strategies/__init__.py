"""The strategy engine: the catalogue's rewrites of LEIR programs, one module per strategy.

Importing this package registers every strategy of every level. Entry points:
``all_strategies()``, ``get_strategy(name)``, ``candidates(program, name)`` and
``apply_strategy(program, name, site, params)`` (see ``strategies.engine``). No TVM, no Django,
no torch.
"""

from strategies import graph, loop, math, memory  # noqa: F401 - registers the strategies
from strategies.base import (
    ENGINE_REFUSALS,
    AppliedStep,
    Exactness,
    InvalidParamsError,
    InvalidResultError,
    Level,
    NotApplicableError,
    ParamSpec,
    Site,
    Strategy,
    StrategyError,
    TraceGroundingError,
)
from strategies.engine import apply_strategy, candidates
from strategies.registry import all_strategies, get_strategy, register
from strategies.traces import Quote, Trace, TraceBuilder

__all__ = [
    "ENGINE_REFUSALS", "AppliedStep", "Exactness", "InvalidParamsError", "InvalidResultError", "Level",
    "NotApplicableError", "ParamSpec", "Quote", "Site", "Strategy", "StrategyError", "Trace", "TraceBuilder",
    "TraceGroundingError", "all_strategies", "apply_strategy", "candidates", "get_strategy", "register",
]
