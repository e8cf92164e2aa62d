"""The project's plug-in points, on one helper: a registry of named items that apps contribute in
their AppConfig.ready() (tools, prompt blocks, the chat's screening, periodic tasks), and that
the code which uses them reads without knowing any of them by name.

A `Registry` keeps its items by name in registration order (the apps' order in INSTALLED_APPS,
then the order of their calls), or in the order `order` gives. Registering a name again
replaces the item in its place: an app set up twice (a test's settings, a reloaded worker)
registers the same thing again. With `replace="same_class"`, another class under a name already
taken is a ValueError, so that two apps cannot silently take each other's tool.

Why not a library: Django finds the apps and runs their ready() already, which is all the
discovery these need; pluggy (pytest's) calls every implementation of a hook, where these look
one item up by name and keep an order; entry points (stevedore, importlib.metadata) register at
install time, where these follow INSTALLED_APPS and the settings (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Named items of one kind. Not locked: apps register at start-up, before any request or
    task reads the registry (tests register and unregister around one test)."""

    def __init__(
        self,
        kind: str,
        *,
        key: Callable[[T], str] = attrgetter("name"),
        replace: Literal["same_class", "any"] = "same_class",
        order: Callable[[T], Any] | None = None,
    ) -> None:
        self.kind = kind
        self._key = key
        self._replace = replace
        self._order = order
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        """Add `item` under its name, after the others; the same name again takes the place of
        the first (another class under it is a ValueError when `replace="same_class"`)."""
        name = self._key(item)
        known = self._items.get(name)
        if known is not None and self._replace == "same_class" and type(known) is not type(item):
            raise ValueError(f"a {self.kind} named {name!r} is registered already ({type(known).__qualname__})")
        self._items[name] = item
        return item

    def emptied(self) -> Registry[T]:
        """A registry of the same kind and rules, with no item (for a test to put in place)."""
        return Registry(self.kind, key=self._key, replace=self._replace, order=self._order)

    def unregister(self, name: str) -> None:
        """Remove the item `name`; no error if there is none."""
        self._items.pop(name, None)

    def get(self, name: str) -> T | None:
        return self._items.get(name)

    def items(self) -> list[T]:
        """Every item, in registration order, or in `order`'s."""
        items = list(self._items.values())
        return sorted(items, key=self._order) if self._order is not None else items

    def __iter__(self) -> Iterator[T]:
        return iter(self.items())

    def __len__(self) -> int:
        return len(self._items)
