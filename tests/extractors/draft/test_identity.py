"""extractors/draft/identity.py: org candidates and their features, the fitted org decision."""

from __future__ import annotations

from extractors import draft_page, extract_document
from extractors.draft.evidence import Context
from extractors.draft.identity import draft_org, org_candidates
from extractors.draft.linear import OrgWeights, hand, shipped

BODY = "<p>On May 2 the API returned errors for 40 minutes. {team} rolled back the deploy.</p>"


def page(head: str = "", team: str = "The on-call engineer", title: str = "API outage on May 2") -> bytes:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><article><h1>API outage on May 2</h1>"
        f"{BODY.format(team=team)}<h2>Root cause</h2><p>A bad config.</p></article></body></html>"
    ).encode()


def ctx(data: bytes, url: str) -> Context:
    return Context(extract_document(data, url=url, content_type="text/html"))


def test_every_source_names_a_candidate_once_with_its_features() -> None:
    head = '<meta property="og:site_name" content="Quillmark Blog">'
    data = page(head, team="The Quillmark SRE team", title="API outage | Quillmark Engineering")
    url = "https://blog.quillmark-labs.example/p/"
    by_name = {c.name: c for c in org_candidates(ctx(data, url), url)}
    assert list(by_name) == ["Quillmark", "quillmark-labs"]  # site, team and title say one name
    own = by_name["Quillmark"].features
    assert (own["src_site"], own["src_team"], own["rule_pick"], own["related"]) == (1.0,) * 4
    assert by_name["Quillmark"].slug == "quillmark-labs"  # the domain spells the name: its slug
    domain = by_name["quillmark-labs"].features
    assert domain["src_domain"] == 1.0 and "related" not in domain  # the domain spelling itself: no evidence
    same = org_candidates(ctx(data, "https://quillmark.example/p/"), "https://quillmark.example/p/")
    assert [c.name for c in same] == ["Quillmark"] and same[0].features["src_domain"] == 1.0


def test_a_sentence_word_taken_for_a_team_is_marked() -> None:
    url = "https://tech.example-corp.io/p/"
    for team, feature in (("Studio와 SRE팀이", "particle_end"), ("The User's team", "particle_end")):
        cands = org_candidates(ctx(page(team=team), url), url)
        picked = next(c for c in cands if c.features.get("src_team"))
        assert picked.features.get(feature) == 1.0, (team, picked)


def test_a_doubted_pick_yields_to_the_domain_a_confident_one_stays() -> None:
    url = "https://tech.example-corp.io/p/"
    garbage = ctx(page(team="Studio와 SRE팀이"), url)
    doubt = OrgWeights(bias=2.0, weights={"particle_end": -5.0, "mixed_script": -5.0}, threshold=0.5)
    found = draft_org(garbage, url, doubt)
    assert (found.record["org"], found.record["org_slug"]) == ("example-corp", "example-corp")
    assert any("doubted" in r for r in found.reasons)
    assert draft_org(garbage, url, None).record["org"] == "Studio와"  # the rules alone take it
    fine = ctx(page('<meta property="og:site_name" content="Example Corp">'), url)
    assert draft_org(fine, url, doubt).record["org"] == "Example Corp"


def test_no_domain_and_a_doubted_pick_is_unknown() -> None:
    url = "https://203.0.113.9/post/"
    found = draft_org(ctx(page(team="Studio와 SRE팀이"), url), url, OrgWeights(bias=-5.0, weights={}))
    assert "org" not in found.record


def test_the_shipped_org_model_doubts_the_issues_sentence_subjects_and_keeps_team_names() -> None:
    model = shipped().org
    if model is None:  # the rules stay: nothing fitted to check
        assert shipped().folds["org"]["landed"] == 0.0
        return
    url = "https://tech.example-corp.io/p/"
    got = draft_page(page(team="Studio와 SRE팀이"), url=url).draft.record
    assert got.org == "example-corp"
    assert draft_page(page(team="The Widget SRE team"), url=url).draft.record.org == "Widget"


def test_drafts_are_byte_identical_run_to_run_and_the_rules_weights_give_the_rules() -> None:
    url = "https://tech.example-corp.io/p/"
    data = page(team="Studio와 SRE팀이")
    first = draft_page(data, url=url, now="2026-01-01T00:00:00Z").draft.model_dump_json()
    assert draft_page(data, url=url, now="2026-01-01T00:00:00Z").draft.model_dump_json() == first
    ruled = draft_page(data, url=url, now="2026-01-01T00:00:00Z", weights=hand()).draft.record
    assert ruled.org == "Studio와"
