"""extractors/draft/linear.py: typed weight tables, the logistic score, the pure-Python fit."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from extractors.draft.linear import (
    FIELDS,
    SHIPPED,
    FieldWeights,
    Weights,
    dump,
    fit,
    hand,
    load,
    logistic,
    score,
    shipped,
)


def test_a_misspelt_key_or_feature_is_an_error_not_an_empty_weight() -> None:
    with pytest.raises(ValidationError, match="unknown feature"):
        FieldWeights(bias=0.0, weights={"rule_kpet": 1.0})
    with pytest.raises(ValidationError, match="Extra inputs"):
        FieldWeights.model_validate({"bias": 0.0, "weights": {}, "treshold": 0.4})
    data = json.loads(SHIPPED.read_text())
    data["fields"]["domians"] = data["fields"].pop("domain")
    with pytest.raises(ValidationError):
        Weights.model_validate(data)


def test_a_bad_weights_file_is_one_line_naming_it(tmp_path) -> None:
    path = tmp_path / "weights.json"
    path.write_text('{"version": "x"}')
    with pytest.raises(ValueError, match=r"weights.json: not a weights file"):
        load(path)


def test_the_shipped_file_is_complete_and_records_its_folds() -> None:
    weights = shipped()
    assert weights.version.startswith("shipped-")
    for name in FIELDS:
        assert 0.0 < weights.field(name).threshold < 1.0
        assert {"l2", "threshold"} <= set(weights.folds[name])
    assert "oof_top1" in weights.folds["root_cause"] and "oof_precision" in weights.folds["domain"]
    assert load(SHIPPED) == weights and dump(weights) == SHIPPED.read_text()


def test_score_is_the_logistic_of_the_weighted_sum_rounded() -> None:
    model = FieldWeights(bias=-1.0, weights={"rule_kept": 2.0, "in_title": 0.5})
    assert score({"rule_kept": 1.0, "in_title": 1.0}, model) == round(logistic(1.5), 4)
    assert score({}, model) == round(logistic(-1.0), 4)
    assert score({"mentions": 9.0}, model) == round(logistic(-1.0), 4)  # no weight: no say
    # The hand weights keep what the rules keep, and nothing else.
    rules = hand().field("components")
    assert score({"rule_kept": 1.0}, rules) >= rules.threshold > score({"rule_kept": 0.0}, rules)


def test_fit_learns_a_signal_and_the_penalty_shrinks_it() -> None:
    rows = [({"in_title": 1.0}, 1.0, 1.0)] * 20 + [({"in_title": 0.0}, 0.0, 1.0)] * 20
    rows += [({"in_title": 1.0}, 0.0, 1.0)] * 2 + [({"in_title": 0.0}, 1.0, 1.0)] * 2
    bias, weights = fit(rows, 0.1)
    assert weights["in_title"] > 2.0 and bias < -1.0
    assert weights["mentions"] == 0.0  # never seen: the penalty keeps it at zero
    _, strong = fit(rows, 100.0)
    assert 0.0 < strong["in_title"] < weights["in_title"]
    assert fit(rows, 0.1) == (bias, weights)  # deterministic


def test_the_text_models_name_their_own_features_and_the_shipped_ones_record_folds() -> None:
    from extractors.draft.linear import TEXT_FIELDS, TextSet, TimelineModel, Weights

    with pytest.raises(ValueError, match="unknown feature"):
        TimelineModel(bias=0.0, weights={"rule_kept": 1.0})  # a vocabulary feature, not a timeline one
    with pytest.raises(ValueError):
        TextSet.model_validate({"evidence": {"sumary": {"bias": 0.0, "weights": {}}}})  # misspelt field
    weights = shipped()
    assert Weights.model_validate_json(dump(weights)) == weights
    for name in TEXT_FIELDS:
        figures = weights.folds[f"evidence.{name}"]
        assert {"oof_correct", "rules_correct", "in_correct", "fitted"} <= set(figures)
        # A model is shipped only where its out-of-fold figure is no worse than the rules'.
        assert (name in weights.text.evidence) == bool(figures["fitted"])
    for key in ("detected_after", "resolved_after"):
        assert {"oof_correct", "oof_invented", "rules_correct"} <= set(weights.folds[f"timeline.{key}"])
