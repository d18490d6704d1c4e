"""extractors/draft/text_fields.py: the fitted evidence sentences (sentence_candidates, fitted) on
pages we wrote; the rules' own choices are tested in test_summary.py, test_field_rules.py, ..."""

from __future__ import annotations

from extractors import draft_page, extract_document
from extractors.draft.evidence import Context
from extractors.draft.linear import SentenceModel, TextSet, shipped
from extractors.draft.text_fields import TEXT_FIELDS, draft_symptoms_text, fitted, sentence_candidates

PAGE = (
    b"<html lang='en'><head><title>Outage postmortem</title></head><body><article><h1>Outage postmortem</h1>"
    b"<p>On May 2 checkout failed for every customer for 40 minutes after a config change.</p>"
    b"<h2>Impact</h2><p>Customers saw error pages at checkout and could not pay.</p>"
    b"<p>Did customers lose money?</p>"
    b"<h2>What happened</h2><p>Shops kept calling our support line all afternoon from their dashboards.</p>"
    b"<p>Support received many complaints from shops about failed payments during the outage.</p>"
    b"<h2>Root cause</h2><p>The config referenced a missing table.</p>"
    b"<h2>Lessons learned</h2><p>We will test config changes in staging first.</p></article></body></html>"
)


def _weights(model: SentenceModel | None):
    text = TextSet(evidence={"symptoms_text": model}) if model is not None else TextSet()
    return shipped().model_copy(update={"text": text})


def test_every_text_field_has_candidates_with_the_rules_choice_as_a_feature() -> None:
    doc = extract_document(PAGE, url="https://e.example/p/", content_type="text/html")
    ctx = Context(doc)
    rules = draft_symptoms_text(ctx)
    fitted(ctx, "symptoms_text", rules, _weights(None))
    cands = sentence_candidates(ctx, "symptoms_text")
    chosen = {q.start for q in rules.evidence["symptoms_text"]}
    assert chosen and {int(c.term) for c, s in cands if c.rule_value} == chosen
    assert all(not s.text.rstrip().endswith("?") for c, s in cands)  # a question is never evidence
    assert set(TEXT_FIELDS) == {"summary", "trigger", "detection", "symptoms_text", "lessons"}


def test_a_fitted_model_adds_its_best_other_sentence_and_no_model_keeps_the_rules() -> None:
    url = "https://e.example/p/"
    plain = draft_page(PAGE, url=url, now="2026-01-01T00:00:00Z", weights=_weights(None)).draft
    quotes = [q.quote for q in plain.evidence["symptoms_text"]]
    assert not any("dashboards" in q for q in quotes)
    # A model that likes sentences late in the page adds the latest candidate (the shops', not the
    # cause's: the rules never quote a cause section for symptoms, nor does the model).
    model = SentenceModel(bias=-5.0, weights={"position": 14.0}, threshold=0.5)
    draft = draft_page(PAGE, url=url, now="2026-01-01T00:00:00Z", weights=_weights(model)).draft
    added = [q.quote for q in draft.evidence["symptoms_text"]]
    assert added[: len(quotes)] == quotes and any("dashboards" in q for q in added)
    assert len(added) == len(quotes) + 1 and "dashboards" in draft.record.symptoms_text["en"]
    # Under the threshold nothing is added.
    shy = SentenceModel(bias=-6.0, weights={}, threshold=0.5)
    assert (
        draft_page(PAGE, url=url, now="2026-01-01T00:00:00Z", weights=_weights(shy)).draft.evidence
        == plain.evidence
    )
