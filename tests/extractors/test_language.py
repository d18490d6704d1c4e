"""detect_language: scripts first, seeded langdetect, <html lang> as a tie-breaker."""

from __future__ import annotations

from extractors.language import detect_language

KOREAN_WITH_CODE_WORDS = (
    "Spring Boot Actuator 지표를 Prometheus로 전달하고 Grafana에서 JVM heap 사용량을 확인했습니다. "
    "WebClient connection pool 설정과 Netty event loop thread 수를 조정했습니다. "
    "Kubernetes liveness probe가 pod을 재시작했습니다."
)


def test_korean_with_product_names_is_korean_even_when_html_says_en() -> None:
    lang, conf = detect_language(KOREAN_WITH_CODE_WORDS, "en")
    assert lang == "ko" and conf > 0.5


def test_japanese_by_kana() -> None:
    text = "キャッシュサーバのディスクが満杯になり、nginx の access.log が原因でした。"
    assert detect_language(text)[0] == "ja"


def test_chinese_without_kana() -> None:
    assert detect_language("缓存服务器的磁盘已满，导致大量请求转发到源站服务器，影响了图片加载。")[0] == "zh"


def test_english_and_other_latin_languages() -> None:
    en = (
        "The gateway read its pool size from a setting that a refactoring had renamed, "
        "so it fell back to its default."
    )
    de = (
        "Der Dienst war wegen eines Fehlers in der Konfiguration für zwei Stunden nicht erreichbar, "
        "wir bitten um Entschuldigung."
    )
    fr = (
        "Le service était indisponible pendant deux heures à cause d'une erreur de configuration "
        "du serveur principal."
    )
    assert detect_language(en)[0] == "en"
    assert detect_language(de)[0] == "de"
    assert detect_language(fr)[0] == "fr"


def test_cyrillic() -> None:
    uk = "Ми виявили, що сервер було зламано через вразливість у службі CVS, і тимчасово зупинили його."
    assert detect_language(uk)[0] in ("uk", "ru", "bg", "mk")


def test_same_answer_every_time() -> None:
    text = "Kurz: der Server ist ausgefallen."
    assert len({detect_language(text) for _ in range(5)}) == 1


def test_no_letters() -> None:
    assert detect_language("12:00 — 13:45 / 99%") == (None, 0.0)
    assert detect_language("12:00", "ja")[0] == "ja"
