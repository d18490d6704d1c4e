"""Help in words: typer 0.2x shows each option's Python type as its metavar (`<bool>`,
`<list[str]>`, `<int range>`); the help pages show TEXT, INTEGER, NUMBER, PATH instead, a
repeatable option as TEXT..., choices as they are, and nothing for a flag (as click does)."""

from __future__ import annotations

from typing import Any

WORDS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH", "Path": "PATH", "bool": ""}
WORDS |= {"file": "FILE", "dir": "DIRECTORY", "datetime": "DATE", "UUID": "UUID"}


def in_words(label: str | None) -> str | None:
    """`<list[str]>` -> TEXT..., `<int range>` -> INTEGER, `<bool>` -> None, `<a|b>` -> a|b."""
    if not label:
        return label
    inner = label.removesuffix("...").strip("<>")
    many = label.endswith("...") or inner.startswith("list[")
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    inner = inner.removesuffix(" range")
    word = inner if "|" in inner else WORDS.get(inner, inner.upper())
    if not word:
        return None
    return word + ("..." if many else "")


def install() -> None:
    """Patch typer's two parameter classes (once); the help test fails should typer change."""
    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        original = cls.display_type_rich
        if getattr(original, "in_words", False):
            continue

        def display_type_rich(self: Any, ctx: Any, _original: Any = original) -> str | None:
            if self.metavar is not None:
                return str(self.metavar)
            if getattr(self, "is_flag", False):  # --json, --strict: no value to name
                return None
            return in_words(_original(self, ctx))

        display_type_rich.in_words = True  # type: ignore[attr-defined]
        cls.display_type_rich = display_type_rich  # type: ignore[method-assign]
