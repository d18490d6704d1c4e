"""Markdown sources: front matter (YAML or TOML) and CommonMark blocks via markdown-it-py."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from lxml import etree, html

from extractors.html import walk_html
from extractors.layout import TextBuilder, join_lines
from schema.document import Link

_YAML_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_TOML_FRONT = re.compile(r"\A\ufeff?\+\+\+[ \t]*\r?\n(.*?)\r?\n\+\+\+[ \t]*(?:\r?\n|\Z)", re.S)
# Template tags that are not Markdown: Liquid/Jekyll, Hugo shortcodes, ERB (Middleman), kramdown IALs
_TEMPLATE = re.compile(r"\{%.*?%\}|\{\{<.*?>\}\}|\{\{%.*?%\}\}|<%.*?%>|^\{:[^}\n]*\}[ \t]*$", re.S | re.M)
# a Liquid expression as a link target ("![x]({{ "/a.png" | absolute_url }})") breaks the link
_LIQUID_TARGET = re.compile(r"\]\(\s*\{\{.*?\}\}\s*\)")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, the rest); malformed front matter is read line by line."""
    m = _YAML_FRONT.match(text)
    if m:
        return _yaml(m.group(1)), text[m.end() :]
    m = _TOML_FRONT.match(text)
    if m:
        try:
            return tomllib.loads(m.group(1)), text[m.end() :]
        except tomllib.TOMLDecodeError:
            return _lines(m.group(1), "="), text[m.end() :]
    return {}, text


def _yaml(block: str) -> dict[str, Any]:
    try:
        import yaml

        data = yaml.safe_load(block)
    except Exception:  # noqa: BLE001 - yaml.YAMLError and its scanner/constructor errors; fall back to lines
        data = None
    return data if isinstance(data, dict) else _lines(block, ":")


def _lines(block: str, sep: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for line in block.splitlines():
        if sep in line and not line.startswith((" ", "\t")):
            key, value = line.split(sep, 1)
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta


def parse_markdown(source: str) -> tuple[dict[str, Any], TextBuilder, list[Link]]:
    """Front matter, the blocks and the links of a Markdown document."""
    from markdown_it import MarkdownIt

    meta, body = split_front_matter(source)
    body = _LIQUID_TARGET.sub("](#)", _TEMPLATE.sub("", body))
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = md.parse(body)
    builder = TextBuilder()
    links: list[Link] = []
    _Walker(builder, links).walk(tokens)
    return meta, builder, links


class _Walker:
    def __init__(self, builder: TextBuilder, links: list[Link]) -> None:
        self.b = builder
        self.links = links
        self.list_depth = 0
        self.item: list[str] | None = None  # text of the open list item, not yet emitted
        self.items: list[list[str] | None] = []
        self.quote = 0
        self.row: list[str] | None = None
        self.heading_level = 0
        self.cell = False

    def _flush_item(self) -> None:
        if self.item is not None and self.item:
            self.b.add("list_item", " ".join(self.item), self.list_depth)
        if self.item is not None:
            self.item.clear()

    def walk(self, tokens: list[Any]) -> None:
        for tok in tokens:
            t = tok.type
            if t == "heading_open":
                self._flush_item()
                self.heading_level = int(tok.tag[1])
            elif t == "heading_close":
                self.heading_level = 0
            elif t in ("bullet_list_open", "ordered_list_open"):
                self._flush_item()
                self.items.append(self.item)
                self.item = None
                self.list_depth += 1
            elif t in ("bullet_list_close", "ordered_list_close"):
                self.list_depth -= 1
                self.item = self.items.pop() if self.items else None
            elif t == "list_item_open":
                self.item = []
            elif t == "list_item_close":
                self._flush_item()
                self.item = None
            elif t == "blockquote_open":
                self.quote += 1
            elif t == "blockquote_close":
                self.quote -= 1
            elif t == "tr_open":
                self.row = []
            elif t == "tr_close":
                if self.row is not None:
                    self.b.add("table_row", " | ".join(c for c in self.row if c))
                self.row = None
            elif t == "inline":
                self._inline(tok)
            elif t in ("fence", "code_block"):
                self._flush_item()
                self.b.add("code", tok.content)
            elif t == "html_block":
                self._flush_item()
                self._html(tok.content)

    def _inline(self, tok: Any) -> None:
        text = self._render(tok.children or [])
        if self.heading_level:
            self.b.add("heading", text, self.heading_level)
        elif self.row is not None:
            self.row.append(" ".join(text.split()))
        elif self.item is not None:
            self.item.append(text)
        else:
            self.b.add("quote" if self.quote else "paragraph", text)

    def _render(self, children: list[Any]) -> str:
        parts: list[str] = []
        href: str | None = None
        label: list[str] = []
        for child in children:
            t = child.type
            if t in ("text", "code_inline"):
                parts.append(child.content)
                if href is not None:
                    label.append(child.content)
            elif t in ("softbreak", "hardbreak"):
                parts.append("\n")
            elif t == "link_open":
                href = str(child.attrs.get("href", ""))
                label = []
            elif t == "link_close" and href is not None:
                self.links.append(Link(url=href, text=" ".join("".join(label).split())))
                href = None
            elif t == "html_inline" and child.content.lower().startswith("<br"):
                parts.append(" ")
        return join_lines("".join(parts))

    def _html(self, content: str) -> None:
        content = re.sub(r"<!--.*?-->", "", content, flags=re.S).strip()
        if not content or not re.sub(r"<[^>]*>", "", content).strip():
            return
        try:
            root = html.fragment_fromstring(content, create_parent="div")
        except (etree.ParserError, ValueError):
            return
        walk_html(root, self.b, self.links)
