"""split_sentences: offsets into the text, trimmed, in English, Japanese and Korean."""

from __future__ import annotations

from extractors.sentences import split_sentences


def pieces(text: str, lang: str | None, start: int = 0, end: int | None = None) -> list[str]:
    spans = split_sentences(text, lang, start, end)
    for s, e in spans:
        assert text[s:e] == text[s:e].strip() and s < e
    assert spans == sorted(spans)
    return [text[s:e] for s, e in spans]


def test_english() -> None:
    text = "The API failed at 08:12 UTC. Dr. Smith paged the team, e.g. via Slack. Was v1.2.3 deployed? Yes!"
    assert pieces(text, "en") == [
        "The API failed at 08:12 UTC.",
        "Dr. Smith paged the team, e.g. via Slack.",
        "Was v1.2.3 deployed?",
        "Yes!",
    ]


def test_japanese() -> None:
    text = (
        "キャッシュサーバのディスクが満杯になりました。その結果、リクエストが急増しました！"
        "対応は完了していますか？はい。"
    )
    assert pieces(text, "ja") == [
        "キャッシュサーバのディスクが満杯になりました。",
        "その結果、リクエストが急増しました！",
        "対応は完了していますか？",
        "はい。",
    ]


def test_korean() -> None:
    text = (
        "Redis 메모리가 가득 찼습니다. 버전 2.1.1을 배포했나요? "
        "네, 14:42에 복구되었습니다! 원인은 TTL 누락이었습니다."
    )
    assert pieces(text, "ko") == [
        "Redis 메모리가 가득 찼습니다.",
        "버전 2.1.1을 배포했나요?",
        "네, 14:42에 복구되었습니다!",
        "원인은 TTL 누락이었습니다.",
    ]


def test_korean_keeps_abbreviations_and_quotes() -> None:
    text = '담당자는 "곧 복구됩니다."라고 말했습니다. 예: Mr. Kim 참고. 끝.'
    got = pieces(text, "ko")
    assert got[0].startswith("담당자는") and "Mr. Kim" in " ".join(got)


def test_blocks_never_join_across_lines() -> None:
    text = "Timeline\n\n08:05 Change merged\n08:12 Errors rise"
    assert pieces(text, "en") == ["Timeline", "08:05 Change merged", "08:12 Errors rise"]


def test_window_offsets_are_absolute() -> None:
    text = "First sentence here. Second one follows. Third ends it."
    start = text.index("Second")
    spans = split_sentences(text, "en", start, len(text))
    assert [text[s:e] for s, e in spans] == ["Second one follows.", "Third ends it."]
    assert spans[0][0] == start


def test_unknown_language_falls_back_to_english_rules() -> None:
    assert pieces("Hallo Welt. Zweiter Satz.", "xx") == ["Hallo Welt.", "Zweiter Satz."]


def test_empty() -> None:
    assert split_sentences("", "en") == [] and split_sentences("   \n ", "ko") == []


def test_a_japanese_full_stop_before_a_digit_still_ends_the_sentence() -> None:
    text = "5月2日14時、決済が止まってしまいました。40分間、誰も決済できずにいました。復旧しました（詳細は後述。）続いて原因です。"
    assert [text[a:b] for a, b in split_sentences(text, "ja")] == [
        "5月2日14時、決済が止まってしまいました。",
        "40分間、誰も決済できずにいました。",
        "復旧しました（詳細は後述。）",  # the closing bracket stays with its sentence
        "続いて原因です。",
    ]
