"""A tiny inventory with reservations."""

from __future__ import annotations

from dataclasses import dataclass, field


class OutOfStock(Exception):
    """Raised when a reservation asks for more than is available."""


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    reserved: int = 0

    @property
    def available(self) -> int:
        return self.quantity - self.reserved


@dataclass
class Inventory:
    items: dict[str, Item] = field(default_factory=dict)

    def add(self, sku: str, name: str, quantity: int) -> Item:
        item = self.items.setdefault(sku, Item(sku, name))
        item.quantity += quantity
        return item

    def reserve(self, sku: str, quantity: int) -> None:
        item = self.items[sku]
        if quantity > item.available:
            raise OutOfStock(f"{sku}: {quantity} asked, {item.available} available")
        item.reserved += quantity

    def release(self, sku: str, quantity: int) -> None:
        item = self.items[sku]
        item.reserved = max(0, item.reserved - quantity)


if __name__ == "__main__":
    stock = Inventory()
    stock.add("A-100", "bolt", 40)
    stock.reserve("A-100", 15)
    print(stock.items["A-100"].available)
