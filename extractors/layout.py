"""Blocks to text: one string with every block's offsets, laid out so quotes read naturally."""

from __future__ import annotations

import re

from schema.document import Block, BlockKind

_TIGHT = {"list_item", "table_row"}  # consecutive items of these kinds are separated by one newline


def clean_inline(text: str) -> str:
    """Collapse runs of white space (newlines, NBSP and ideographic spaces too) to one space."""
    if "\u200b" in text:  # zero-width space is not white space to str.split
        text = text.replace("\u200b", " ")
    return " ".join(text.split())


class TextBuilder:
    """Appends blocks to one text: "\\n\\n" between blocks, "\\n" inside a run of list items or rows."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []

    def add(self, kind: BlockKind, text: str, level: int = 0, clean: bool = True) -> Block | None:
        """Append a block; `clean=False` for text that is already a block of a TextBuilder."""
        if clean and kind == "code":
            text = "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")
        elif clean:
            text = clean_inline(text)
        if not text.strip():
            return None
        if self.blocks:
            prev = self.blocks[-1].kind
            sep = "\n" if kind in _TIGHT and prev == kind else "\n\n"
            self._parts.append(sep)
            self._length += len(sep)
        # built from offsets this class computes: no validation needed (Document validates the rest)
        block = Block.model_construct(
            kind=kind, start=self._length, end=self._length + len(text), level=level
        )
        self._parts.append(text)
        self._length += len(text)
        self.blocks.append(block)
        return block

    def without(self, drop: set[int]) -> TextBuilder:
        """A new builder holding every block but those whose index is in `drop`."""
        out = TextBuilder()
        text = self.text
        for i, block in enumerate(self.blocks):
            if i not in drop:
                out.add(block.kind, text[block.start : block.end], block.level, clean=False)
        return out

    @property
    def text(self) -> str:
        if len(self._parts) > 1:  # join once; later reads are free until the next add
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def __len__(self) -> int:
        return self._length


_CJK_END = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]$")
_CJK_START = re.compile(r"^[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def join_lines(text: str) -> str:
    """Unwrap hard-wrapped lines: a space between them, none next to a Japanese/Chinese character
    (those scripts use no spaces; "(CAN-2004-0396)" + "が公表される" joins without one)."""
    if "\n" not in text:
        return text
    out = ""
    for line in (line.strip() for line in text.split("\n")):
        if not line:
            continue
        if out and not (_CJK_END.search(out) or _CJK_START.match(line)):
            out += " "
        out += line
    return out
