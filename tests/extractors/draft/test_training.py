"""extractors/draft/training.py: folds grouped by organisation, the inner choice, the shipped set."""

from __future__ import annotations

from extractors.draft.candidates import Candidate
from extractors.draft.linear import FIELDS, hand, shipped
from extractors.draft.training import (
    Labelled,
    Tally,
    TextLabelled,
    dump_set,
    examples,
    grouped_folds,
    load_set,
    refit,
    replay,
    shipped_set,
)


def page(group: str, key: str, good: str, decoy: str) -> Labelled:
    """A page whose cause candidates are `good` (named in the cause section) and `decoy`."""
    cands = {
        "root_cause": [
            Candidate(decoy, 3.0, {"rule_kept": 1.0, "in_other": 1.0, f"term:{decoy}": 1.0}),
            Candidate(good, 2.0, {"in_cause": 1.0, "cause_cue": 1.0, f"term:{good}": 1.0}),
        ],
        "components": [Candidate("dns", 2.0, {"rule_kept": 1.0}), Candidate("cdn", 1.0, {"in_fix": 1.0})],
    }
    must = {"components": frozenset({"dns"})}
    return Labelled(group, key, cands, frozenset({good}), must, {"components": frozenset({"cdn"})})


PAGES = [page(f"org{i % 5}", f"p{i}", "config-change", "network") for i in range(20)]


def test_folds_never_split_an_organisation_and_are_deterministic() -> None:
    groups = ["a", "a", "a", "b", "c", "c", "d", "e"]
    folds = grouped_folds(groups, 3)
    assert len(folds) == 3 and sorted(g for f in folds for g in f) == ["a", "b", "c", "d", "e"]
    assert folds == grouped_folds(list(reversed(groups)), 3)
    assert len(grouped_folds(["a", "a"], 5)) == 1


def test_may_terms_and_unknown_causes_teach_nothing() -> None:
    rows = examples(PAGES[:1], "components")
    assert [y for _f, y, _w in rows] == [1.0]  # dns required; cdn allowed, not taught
    unknown = Labelled("x", "k", PAGES[0].candidates, None)
    assert examples([unknown], "root_cause") == []


def test_a_refit_learns_what_the_rules_got_wrong() -> None:
    rules = Tally()
    for p in PAGES:
        rules.add(p, "root_cause", hand().field("root_cause"))
    assert rules.top1 == 0 and rules.top3 == 20  # the rules pick the decoy
    weights = refit(PAGES, "test")
    fitted = Tally()
    for p in PAGES:
        fitted.add(p, "root_cause", weights.field("root_cause"))
    assert fitted.top1 == 20
    assert weights.version.startswith("learned-") and refit(PAGES, "test") == weights


def test_replay_scores_each_group_with_weights_from_before_it() -> None:
    steps = replay([], PAGES, hand(), steps=4)
    assert [(s.first, s.last) for s in steps] == [(1, 5), (6, 10), (11, 15), (16, 20)]
    assert steps[0].root_cause.top1 == 0  # nothing learned yet: the rules
    assert steps[-1].root_cause.top1 == 5 and steps[-1].before.top1 == 0


def test_the_shipped_set_round_trips_and_refits_to_the_shipped_models() -> None:
    assert load_set(dump_set(PAGES)) == PAGES
    base = shipped_set()
    assert len(base) >= 50 and len({p.group for p in base}) >= 10
    again = refit(base, "check")
    for name in FIELDS:
        assert again.field(name) == shipped().field(name), name


# --- the text decisions


def text_page(group: str, key: str, right_is_rules: bool) -> TextLabelled:
    """A page whose timeline candidates are the rules' value and another; the rules are right on
    some pages, and the other (a stated duration) on the rest."""
    rules = Candidate("PT1H", 1.0, {"rule": 1.0, "start_event": 1.0, "start_change": 1.0})
    other = Candidate("PT2H", 0.0, {"stated": 1.0})
    return TextLabelled(
        group,
        key,
        {"timeline.resolved_after": [rules, other]},
        {"timeline.resolved_after": frozenset({"PT1H" if right_is_rules else "PT2H"})},
        {"timeline.resolved_after": True},
    )


def test_a_text_decision_is_fitted_only_where_it_beats_the_rules() -> None:
    from extractors.draft.training import choose_text, picked, text_rules, train_text

    decision = "timeline.resolved_after"
    good_rules = [text_page(f"org{i % 5}", f"p{i}", True) for i in range(20)]
    assert choose_text(good_rules, decision) is None  # the rules are right everywhere: they stay
    stated_better = [text_page(f"org{i % 5}", f"p{i}", i % 4 == 0) for i in range(20)]
    model = choose_text(stated_better, decision)
    assert model is not None and picked(stated_better[1], decision, model) == ["PT2H"]
    assert picked(stated_better[1], decision, text_rules(decision)) == ["PT1H"]
    text, folds = train_text(stated_better)
    assert "resolved_after" in text.timeline and folds[decision]["fitted"] == 1.0
    assert folds[decision]["oof_correct"] > folds[decision]["rules_correct"]


def test_a_timeline_key_without_gold_counts_what_is_drafted_as_invented() -> None:
    from extractors.draft.training import TextTally, text_rules

    page = TextLabelled(
        "org", "p", {"timeline.detected_after": [Candidate("PT5M", 1.0, {"rule": 1.0})]}, {}, {}
    )
    tally = TextTally()
    tally.add(page, "timeline.detected_after", text_rules("timeline.detected_after"))
    assert (tally.invented, tally.no_gold, tally.gold) == (1, 1, 0)
