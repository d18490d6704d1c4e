"""Sets of records as Python ints (bit i: the record at position i): filters are ANDs, facets are bit counts.

At 10,000 records a set is 1.25 kB; an AND and a popcount take about a microsecond, so counting
every facet of a result (some 600 terms and organisations) costs well under a millisecond, where
SQL's GROUP BY over the terms table took tens (bench/search.py).
"""

from __future__ import annotations

from collections.abc import Iterable


def to_mask(positions: Iterable[int], size: int) -> int:
    """The set of `positions` (each < size) as an int."""
    buffer = bytearray((size + 7) // 8)
    for position in positions:
        buffer[position >> 3] |= 1 << (position & 7)
    return int.from_bytes(buffer, "little")


def positions(mask: int) -> list[int]:
    """The positions set in `mask`, ascending."""
    out: list[int] = []
    data = mask.to_bytes((mask.bit_length() + 7) // 8, "little")
    for index, byte in enumerate(data):
        if byte:
            base = index << 3
            for bit in range(8):
                if byte >> bit & 1:
                    out.append(base + bit)
    return out


def span(start: int, stop: int) -> int:
    """The positions start <= i < stop."""
    if stop <= start:
        return 0
    return ((1 << stop) - 1) ^ ((1 << start) - 1)
