"""Answers the stub serves for tests/data/postmortems/ko-postmortem.html: one good, some bad."""

from __future__ import annotations

from typing import Any

PAGE = "ko-postmortem.html"
URL = "https://tech.nuripay.example/2023/09/20/payment-api-incident/"
SUMMARY_KO = "2023년 9월 14일 오후 결제 API에서 장애가 발생해 약 3시간 동안 일부 결제가 실패했습니다."
DETECT_KO = "오후 3시 25분: 결제 실패율 알림이 울려 당직자가 장애를 인지했습니다."
START_KO = "2023년 9월 14일 오후 3시 10분: 데이터베이스 마이그레이션 스크립트를 운영 환경에 배포했습니다."
END_KO = "오후 6시 5분: 마이그레이션을 중단하고 롤백하여 결제가 정상화되었습니다."
LOCK_KO = "마이그레이션 스크립트가 결제 테이블 전체에 잠금을 걸었고"


def _both(en: str, ko: str) -> dict[str, str]:
    return {"en": en, "ko": ko}


GOOD: dict[str, Any] = {
    "texts": [
        {
            "field": "summary",
            "text": _both(
                "On 14 September 2023 a database migration locked the payments table, and about a fifth "
                "of payment requests timed out for nearly three hours.",
                "2023년 9월 14일 데이터베이스 마이그레이션이 결제 테이블을 잠가 약 3시간 동안 결제 요청의 "
                "약 20%가 타임아웃으로 실패했습니다.",
            ),
            "quotes": [SUMMARY_KO, "장애 동안 전체 결제 요청의 약 20%가 타임아웃으로 실패했습니다."],
        },
        {
            "field": "trigger",
            "text": _both(
                "A migration script took a lock on the whole payments table.",
                "마이그레이션 스크립트가 결제 테이블 전체를 잠갔습니다.",
            ),
            "quotes": [LOCK_KO],
        },
        {
            "field": "detection",
            "text": _both(
                "A payment failure-rate alert paged the on-call engineer.",
                "결제 실패율 알림으로 인지했습니다.",
            ),
            "quotes": [DETECT_KO],
        },
    ],
    "items": [
        {
            "field": "remediation",
            "text": _both("Stopped and rolled back the migration.", "마이그레이션을 중단하고 롤백했습니다."),
            "quotes": ["실행 중인 마이그레이션을 중단하고 롤백했습니다."],
        },
        {
            "field": "remediation",
            "text": _both(
                "Reprocessed the waiting payment requests.", "대기 중이던 결제 요청을 재처리했습니다."
            ),
            "quotes": ["대기 중이던 결제 요청을 재처리했습니다."],
        },
    ],
    "terms": [
        {"field": "root_cause", "term": "upgrade-migration", "quotes": [START_KO]},
        {"field": "symptoms", "term": "request-timeouts", "quotes": [LOCK_KO]},
    ],
    "durations": [
        {"field": "detected_after", "value": "PT15M", "quotes": [START_KO, DETECT_KO]},
        {"field": "resolved_after", "value": "PT2H55M", "quotes": [START_KO, END_KO]},
    ],
}

INVENTED_QUOTES: dict[str, Any] = {
    "texts": [
        {
            "field": "summary",
            "text": _both("INVENTED: a cosmic ray flipped a bit.", "지어낸 요약입니다."),
            "quotes": ["우주선이 메모리의 비트를 뒤집어 결제가 실패했습니다."],
        }
    ],
    "items": [
        {
            "field": "action_items",
            "text": _both("INVENTED: buy ECC memory.", "지어낸 조치."),
            "quotes": ["ECC 메모리를 구매하겠습니다 반드시"],
        }
    ],
    "terms": [],
    "durations": [{"field": "resolved_after", "value": "PT9H", "quotes": [START_KO, END_KO]}],
}

UNKNOWN_TERMS: dict[str, Any] = {
    "texts": [],
    "items": [],
    "terms": [
        {"field": "root_cause", "term": "cosmic-ray-bitflip", "quotes": [LOCK_KO]},
        {"field": "components", "term": "flux-capacitor", "quotes": [LOCK_KO]},
        {"field": "blame", "term": "dave", "quotes": [LOCK_KO]},
    ],
    "durations": [],
}

BROKEN_JSON = '{"texts": [{"field": "summary", "text": {"en": "INVENTED truncated'

# Strings of the bad answers that must never appear in a draft.
INVENTED = ("INVENTED", "지어낸", "우주선", "ECC", "PT9H", "cosmic-ray-bitflip", "flux-capacitor", "dave")
