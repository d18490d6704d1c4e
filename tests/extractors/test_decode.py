"""decode_bytes: header, BOM, <meta>, ISO-2022-JP escapes, legacy CJK encodings, bad bytes."""

from __future__ import annotations

from extractors.decode import decode_bytes

KO = "결제 서버 장애 회고: 원인 분석과 재발 방지 대책"
JA = "画像配信サーバの障害報告：発生原因と再発防止策について"


def test_utf8_plain() -> None:
    text, enc, warnings = decode_bytes("héllo wörld".encode())
    assert (text, enc, warnings) == ("héllo wörld", "utf-8", [])


def test_bom_wins_over_meta() -> None:
    data = b"\xef\xbb\xbf" + '<meta charset="shift_jis"><p>日本</p>'.encode()
    text, enc, _ = decode_bytes(data)
    assert enc == "utf-8" and "日本" in text and not text.startswith("\ufeff")


def test_utf16_bom() -> None:
    text, enc, _ = decode_bytes("\ufeff<p>장애</p>".encode("utf-16-le"))
    assert "장애" in text and enc == "utf-16-le"


def test_header_charset_euc_kr_reads_cp949_syllables() -> None:
    # 똠 and 햏 exist in CP949 (Unified Hangul Code) but not in EUC-KR proper
    data = ("<p>" + KO + " 똠방각하 햏</p>").encode("cp949")
    text, enc, warnings = decode_bytes(data, "text/html; charset=EUC-KR")
    assert enc == "cp949" and "똠방각하 햏" in text and KO in text and warnings == []


def test_meta_charset_shift_jis_reads_cp932_symbols() -> None:
    data = ('<html><head><meta charset="Shift_JIS"></head><body>' + JA + " ①②</body></html>").encode("cp932")
    text, enc, _ = decode_bytes(data)
    assert enc == "cp932" and JA in text and "①②" in text


def test_http_equiv_euc_jp() -> None:
    head = '<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'
    text, enc, _ = decode_bytes((head + "<p>" + JA + "</p>").encode("euc_jp"))
    assert enc == "euc_jp" and JA in text


def test_iso_2022_jp_detected_even_when_declared_utf8() -> None:
    data = ('<meta charset="utf-8"><p>' + JA + "</p>").encode("iso2022_jp")
    text, enc, warnings = decode_bytes(data, "text/html; charset=utf-8")
    assert enc == "iso2022_jp" and JA in text
    assert any("ISO-2022-JP" in w for w in warnings)
    assert "\x1b" not in text


def test_undeclared_legacy_encoding_is_detected() -> None:
    body = ("<p>" + KO + "</p>") * 20
    text, _, _ = decode_bytes(body.encode("cp949"))
    assert KO in text


def test_latin1_label_on_utf8_bytes_reads_utf8() -> None:
    text, enc, _ = decode_bytes('<meta charset="iso-8859-1"><p>café</p>'.encode())
    assert enc == "utf-8" and "café" in text


def test_invalid_bytes_are_replaced_and_flagged() -> None:
    text, _, warnings = decode_bytes(b"<p>ok \xff\xfe\xfa broken</p>", "text/html; charset=utf-8")
    assert "ok" in text and "broken" in text
    assert any("U+FFFD" in w for w in warnings) or "\ufffd" not in text


def test_stray_escape_characters_flagged_and_removed() -> None:
    text, _, warnings = decode_bytes(b"<p>before \x1b[31m after \xc3\xa9</p>")
    assert "\x1b" not in text and any("escape" in w for w in warnings)
