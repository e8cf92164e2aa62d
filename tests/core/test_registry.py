"""core.registry: the one helper behind the plug-in points (tools, prompt blocks, the chat's
screening, periodic tasks)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conversations import screening
from core import background
from core.registry import Registry
from llm import prompt_blocks, tools


@dataclass
class Item:
    name: str
    rank: int = 0


class Other(Item):
    pass


def test_items_keep_their_order_and_a_name_again_takes_its_place():
    """Registration order, or `order`'s; the same name again replaces the item where it was;
    another class under it is refused (replace="same_class") or takes its place (replace="any")."""
    registry: Registry[Item] = Registry("thing")
    first, second = registry.register(Item("a", 2)), registry.register(Item("b", 1))
    assert registry.items() == [first, second] and len(registry) == 2
    again = registry.register(Item("a", 3))
    assert registry.items() == [again, second] and registry.get("a") is again
    with pytest.raises(ValueError, match="a thing named 'a' is registered already"):
        registry.register(Other("a"))
    registry.unregister("a")
    registry.unregister("missing")
    assert list(registry) == [second] and registry.get("a") is None
    assert registry.emptied().items() == [] and registry.items() == [second]

    ranked: Registry[Item] = Registry("thing", replace="any", order=lambda item: item.rank)
    ranked.register(Item("a", 2))
    ranked.register(Item("b", 1))
    ranked.register(Other("a", 0))
    assert [(type(item), item.name) for item in ranked] == [(Other, "a"), (Item, "b")]


def test_the_plug_in_points_are_registries():
    """The tools, the prompt blocks, the screening guard and the periodic tasks all keep their
    items in a core.registry.Registry (one behaviour to learn, one to test)."""
    for registry in (tools._registry, prompt_blocks._registry, screening._registry, background._schedule):
        assert isinstance(registry, Registry)
    assert [tool.name for tool in tools.registered()] == ["save_memory", "create_quiz", "update_task"]
    assert screening.registered() is not None
