"""extractors/draft/page_fit.py: the verdict and org fits, their folds, and what ships."""

from __future__ import annotations

import pytest

from extractors.draft.linear import OrgWeights, VerdictWeights, shipped
from extractors.draft.page_fit import (
    PAGE_SET,
    OrgExample,
    OrgTally,
    PageExample,
    VerdictTally,
    decide,
    decide_org,
    decide_verdict,
    dump_page_set,
    fit_org,
    fit_verdict,
    load_page_set,
    pick_org,
    pick_skip,
    verdict_no_worse,
)


def pages(noisy_rules: bool, signal: bool = True) -> list[PageExample]:
    """Postmortems state a fix and clock times, generic articles neither; look-alikes a fix but a
    look-alike rule fires. With `noisy_rules`, the rules get every fifth page wrong; without
    `signal`, every page has the same features (nothing to learn)."""
    out = []
    same = {"fix": 1.0}
    for i in range(60):
        org = f"org{i % 6}"
        wrong = noisy_rules and i % 5 == 0
        pm, la, gen = ({"fix": 1.0, "clock_times": 3.0}, {"fix": 1.0, "rule_no": 1.0}, {"neg_words": 2.0})
        if not signal:
            pm = la = gen = same
        out.append(PageExample(org, f"pm{i}", "postmortem", pm, not wrong, False))
        out.append(PageExample(org, f"la{i}", "look-alike", la, wrong, False))
        out.append(PageExample(f"generic-{i % 4}", f"g{i}", "generic", gen, wrong, not wrong))
    return out


def test_pick_skip_meets_the_triage_targets_and_takes_the_middle() -> None:
    points = [("postmortem", 0.9)] * 50 + [("generic", 0.05)] * 97 + [("generic", 0.6)] * 3
    points += [("look-alike", 0.3)] * 4
    cut = pick_skip(points)
    # Every cut from 0.06 to 0.30 skips all generic "no"s (97/100) and no postmortem, and at
    # 0.31 and above every look-alike is skipped: more than half.
    assert 0.06 <= cut <= 0.30
    assert pick_skip([("postmortem", 0.02), ("postmortem", 0.9)]) == 0.02  # never past a postmortem


def test_a_fit_learns_the_signal_and_decides_with_probability_and_cut() -> None:
    data = pages(noisy_rules=False)
    model = fit_verdict(data, 1.0, 0.3)
    assert model.weights["clock_times"] > 0 and model.weights["rule_no"] < 0
    assert decide(data[0], model) == (True, False)
    assert decide(data[2], model)[0] is False
    assert decide(data[2], None) == (data[2].rule_verdict, data[2].rule_skip)


def test_the_fit_ships_only_when_it_is_no_worse_out_of_fold() -> None:
    blind = decide_verdict(pages(noisy_rules=False, signal=False), k=3, inner_k=3)
    assert blind.model is None and not blind.landed  # nothing to learn, the rules right: they stay
    noisy = decide_verdict(pages(noisy_rules=True), k=3, inner_k=3)
    assert noisy.landed and isinstance(noisy.model, VerdictWeights)
    assert isinstance(noisy.out_of_fold, VerdictTally) and noisy.out_of_fold.accuracy() == 1.0


def test_no_worse_is_every_figure() -> None:
    rules, fit = VerdictTally(), VerdictTally()
    rules.add("postmortem", True, False)
    fit.add("postmortem", False, False)  # one postmortem lost: worse, whatever else
    assert not verdict_no_worse(fit, rules) and verdict_no_worse(rules, rules)


def org_page(i: int, garbage: bool) -> OrgExample:
    """The rules pick a team line; a garbage one ("Studio와") is wrong, the domain is right."""
    team = {"rule_pick": 1.0, "src_team": 1.0, "sources": 0.69}
    if garbage:
        team["particle_end"] = 1.0
    domain = {"src_domain": 1.0, "sources": 0.69}
    return OrgExample(
        f"org{i % 6}", f"p{i}", [(team, not garbage, False, not garbage), (domain, True, True, False)]
    )


def test_a_doubted_pick_yields_to_the_domain_and_the_fit_lands() -> None:
    data = [org_page(i, garbage=(i // 6) % 3 == 0) for i in range(30)]  # garbage in every org
    model = fit_org(data, 1.0, 0.5)
    assert model.weights["particle_end"] < 0
    assert pick_org(data[0], model) == 1 and pick_org(data[6], model) == 0
    assert pick_org(data[0], None) == 0  # the rules take the team line
    chosen = decide_org(data, k=3, inner_k=3)
    assert chosen.landed and isinstance(chosen.out_of_fold, OrgTally)
    assert chosen.out_of_fold.right == 30 and chosen.rules.right == 18


def test_no_domain_and_a_doubted_pick_is_unknown() -> None:
    page = OrgExample("a", "p", [({"rule_pick": 1.0, "particle_end": 1.0}, False, False, False)])
    model = OrgWeights(bias=0.0, weights={"particle_end": -5.0}, threshold=0.5)
    assert pick_org(page, model) is None
    tally = OrgTally()
    tally.add(page, model)
    assert (tally.unknown, tally.wrong) == (1, 0)


def test_the_page_set_round_trips_and_holds_no_text() -> None:
    verdict = pages(noisy_rules=False)[:3]
    org = [org_page(0, garbage=True)]
    text = dump_page_set(verdict, org)
    assert load_page_set(text) == (verdict, org)
    assert dump_page_set(*load_page_set(text)) == text


@pytest.mark.skipif(not PAGE_SET.is_file(), reason="no shipped page set")
def test_the_shipped_weights_record_the_folds_that_chose_them() -> None:
    verdict, org = load_page_set(PAGE_SET.read_text(encoding="utf-8"))
    assert {p.kind for p in verdict} == {"postmortem", "look-alike", "generic"}
    assert all(all(isinstance(v, float) for v in p.features.values()) for p in verdict)
    weights = shipped()
    for name, model in (("verdict", weights.verdict), ("org", weights.org)):
        folds = weights.folds[name]
        assert (model is not None) == (folds["landed"] == 1.0), name
        assert {"oof_" + k.removeprefix("in_") for k in folds if k.startswith("in_")} <= set(folds)
    assert len(org) == weights.folds["org"]["oof_pages"]
