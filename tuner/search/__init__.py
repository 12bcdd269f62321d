"""Multi-step search over LEIR states (``base.Search``) by the algorithms of ``algorithms``."""

from tuner.search.algorithms import ALGORITHMS
from tuner.search.base import Budget, Node, Search

__all__ = ["ALGORITHMS", "Budget", "Node", "Search"]
