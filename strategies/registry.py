"""The strategy registry: every catalogue strategy, found by name, listed by number.

Strategies register themselves with ``@register`` when their level package is imported;
``strategies`` imports every level package, so importing it fills the registry.
"""

from __future__ import annotations

from strategies.base import Level, Strategy

_REGISTRY: dict[str, Strategy] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: instantiate and register a strategy (names and numbers must be unique)."""
    if cls.name in _REGISTRY:
        raise ValueError(f"strategy {cls.name} registered twice")
    if any(s.number == cls.number for s in _REGISTRY.values()):
        raise ValueError(f"strategy number {cls.number} registered twice ({cls.name})")
    _REGISTRY[cls.name] = cls()
    return cls


class UnknownStrategyError(KeyError):
    """A strategy name the registry does not know; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def get_strategy(name: str) -> Strategy:
    """The registered strategy called ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(s.name for s in all_strategies())
        raise UnknownStrategyError(f"unknown strategy {name!r}; known: {known}") from None


def all_strategies(level: Level | str | None = None) -> tuple[Strategy, ...]:
    """Registered strategies in catalogue order, optionally of one level."""
    chosen = sorted(_REGISTRY.values(), key=lambda s: s.number)
    if level is not None:
        chosen = [s for s in chosen if s.level == Level(level)]
    return tuple(chosen)
