"""extractors/draft/candidates.py: a candidate's features, and ranking by a field's weights."""

from __future__ import annotations

import math

from extractors.draft.candidates import Mention, build, rank
from extractors.draft.linear import FieldWeights


def test_features_describe_where_and_how_a_term_is_named() -> None:
    mentions = {
        "dns": [Mention(None, 0, False), Mention("root_cause", 400, True), Mention("impact", 100, False)],
        "cdn": [Mention("lessons", 900, False)],
    }
    cands = build({"dns": 6.0, "cdn": 1.5}, mentions, kept={"dns"}, text_length=1000, negated={"cdn": 2})
    dns, cdn = cands
    assert (dns.term, cdn.term) == ("dns", "cdn")  # rule score first
    assert dns.features["rule_kept"] == 1.0 and cdn.features["rule_kept"] == 0.0
    assert dns.features["rule_rank"] == 1.0 and cdn.features["rule_rank"] == 0.5
    assert dns.features["relative"] == 1.0 and cdn.features["relative"] == 0.25
    assert dns.features["in_title"] == dns.features["in_cause"] == dns.features["in_impact"] == 1.0
    assert dns.features["cause_cue"] == 1.0 and "cause_cue" not in cdn.features
    assert dns.features["first_position"] == 0.1 and cdn.features["first_position"] == 0.9
    assert dns.features["mentions"] == round(math.log1p(2), 6)  # the title is no sentence
    assert cdn.features["in_fix"] == 1.0 and cdn.features["negated"] == round(math.log1p(2), 6)
    assert dns.features["term:dns"] == 1.0 and "term:dns" not in cdn.features


def test_rank_orders_by_the_fields_probability_then_the_rules() -> None:
    cands = build({"a": 5.0, "b": 1.0, "c": 1.0}, {}, kept={"a"}, text_length=10)
    prefers_b = FieldWeights(bias=0.0, weights={"term:b": 3.0})
    ranked = rank(cands, prefers_b)
    assert [c.term for c in ranked] == ["b", "a", "c"]
    assert ranked[0].p > ranked[1].p == ranked[2].p  # a and c tie: the rules' order breaks it
