"""Bytes to text: BOM, HTTP header, <meta>, ISO-2022-JP escapes, UTF-8, then charset-normalizer."""

from __future__ import annotations

import codecs
import re

# What labels on the web mean in practice (WHATWG Encoding Standard): the legacy labels name
# supersets that real pages use (EUC-KR pages carry CP949 syllables, Shift_JIS pages CP932 symbols).
_ALIASES = {
    "euc-kr": "cp949",
    "euckr": "cp949",
    "ks_c_5601-1987": "cp949",
    "ks_c_5601": "cp949",
    "windows-949": "cp949",
    "x-windows-949": "cp949",
    "uhc": "cp949",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "csshiftjis": "cp932",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-euc-jp": "euc_jp",
    "utf8": "utf-8",
}
# Tried in order when an encoding fails strictly: the same family, wider.
_WIDER = {
    "euc_jp": ("euc_jis_2004", "cp932"),
    "iso2022_jp": ("iso2022_jp_2004", "iso2022_jp_ext", "iso2022_jp_2"),
    "cp932": ("shift_jis_2004",),
}
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.I)
_XML_DECL = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([a-zA-Z0-9_\-.]+)""")
_HEADER = re.compile(r"""charset\s*=\s*["']?([a-zA-Z0-9_\-:.]+)""", re.I)
# ISO-2022-JP switches character sets with these; the bytes are otherwise 7-bit and decode as
# "valid" UTF-8, which is how trafilatura ends up with mojibake
_ISO2022_ESC = re.compile(rb"\x1b\$[@B]|\x1b\(J|\x1b\$\(D")
_PREFIX = 4096
# one replacement character per this many decoded characters marks a wrong label, not a few
# damaged bytes: a cp949 page read as UTF-8 gets one every 2-3 characters
_WRONG_LABEL_SHARE = 200  # <meta charset> must be in the first 1024 bytes by the spec; pages overrun it


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _strict(data: bytes, codec: str) -> str | None:
    for name in (codec, *_WIDER.get(codec, ())):
        try:
            return data.decode(name)
        except (UnicodeDecodeError, LookupError):
            continue
    return None


def _declared(data: bytes, content_type: str | None) -> tuple[str | None, str]:
    """The encoding the header or the document itself declares, and where it was declared."""
    if content_type:
        m = _HEADER.search(content_type)
        if m and (codec := _codec(m.group(1))):
            return codec, "header"
    head = data[:_PREFIX]
    found = _XML_DECL.match(head) or _META.search(head)
    if found and (codec := _codec(found.group(1).decode("ascii", "replace"))):
        return codec, "meta"
    return None, ""


def decode_bytes(data: bytes, content_type: str | None = None) -> tuple[str, str, list[str]]:
    """Decode a page: (text, python codec name, warnings). Never raises on bad bytes."""
    warnings: list[str] = []
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            return _finish(data[len(bom) :].decode(codec, "replace"), codec, warnings)
    declared, where = _declared(data, content_type)
    iso2022 = _ISO2022_ESC.search(data) is not None
    if iso2022 and declared != "iso2022_jp" and not any(b > 0x7F for b in data[:65536]):
        if declared:
            warnings.append(f"declared {declared} ({where}) but bytes are ISO-2022-JP")
        declared = "iso2022_jp"
    candidates = [c for c in (declared, "utf-8") if c]
    if declared == "cp1252":
        # a page labelled Latin-1 whose bytes are valid UTF-8 is UTF-8 (a template default left
        # in place); the reverse mistake cannot happen, cp1252 text is rarely valid UTF-8
        candidates = ["utf-8", "cp1252"]
    for codec in candidates:
        text = _strict(data, codec)
        if text is not None:
            if declared and codec != declared:
                warnings.append(f"declared {declared} ({where}) does not decode; used {codec}")
            return _finish(text, codec, warnings)
    if declared:
        # a declared encoding with a few bad bytes (a truncated or spliced page) is still the
        # page's encoding; many bad bytes mean the label is wrong (an EUC-KR page saying utf-8)
        text = data.decode(declared, "replace")
        if text.count("\ufffd") <= max(3, len(text) // _WRONG_LABEL_SHARE):
            return _finish(text, declared, warnings)
    guess = _normalizer_guess(data)
    if guess and (text := _strict(data, guess)) is not None:
        if declared:
            warnings.append(f"declared {declared} ({where}) does not decode; detected {guess}")
        return _finish(text, guess, warnings)
    codec = declared or guess or "utf-8"
    return _finish(data.decode(codec, "replace"), codec, warnings)


def _normalizer_guess(data: bytes) -> str | None:
    from charset_normalizer import from_bytes

    # 256 KiB is enough to tell CJK legacy encodings apart and bounds the detector's time
    best = from_bytes(data[: 256 * 1024]).best()
    return _codec(best.encoding) if best is not None else None


def _finish(text: str, codec: str, warnings: list[str]) -> tuple[str, str, list[str]]:
    bad = text.count("\ufffd")
    if bad:
        warnings.append(f"{bad} undecodable byte sequences replaced (U+FFFD) decoding as {codec}")
    esc = text.count("\x1b")
    if esc:
        warnings.append(f"{esc} stray escape characters (ESC) in text decoded as {codec}")
        text = text.replace("\x1b", "")
    return text, codec, warnings
