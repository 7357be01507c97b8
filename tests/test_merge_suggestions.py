"""Merge suggestions ranked by evidence, without numbers or dates, with their total and pages."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.context_graph.declared_aliases import _AKA_RE, _PAREN_RE, _declarations
from workbench.context_graph.merge_suggestions import (EVIDENCE_RANKS, MergeSuggestion, evidence_rank, is_number_or_date,
                                                       page_of, rank_suggestions)
from workbench.cli import main

ISSUE_EXAMPLE = [
    MergeSuggestion("2024", "2023", 0.95, "name similarity"),
    MergeSuggestion("14 February 2024", "14 February 2023", 0.94, "name similarity + embedding similarity"),
    MergeSuggestion("BREATHE-2", "BREATHE-3", 0.9, "name similarity"),
    MergeSuggestion("Sign-in", "Signing", 0.86, "name similarity"),
    MergeSuggestion("Auth Service", "Auth Services", 0.96, "name similarity"),
    MergeSuggestion("token cache", "令牌缓存", 0.8, "translation: 令牌 = token, 缓存 = cache"),
    MergeSuggestion("认证服务", "Auth Service", 0.9, "declared in zh.md: “认证服务（Auth Service）”"),
]


def test_declared_aliases_then_translations_then_meaning_then_spelling():
    ranked = [(s.a, s.b) for s in rank_suggestions(ISSUE_EXAMPLE)]
    assert ranked == [("认证服务", "Auth Service"), ("token cache", "令牌缓存"), ("Auth Service", "Auth Services"),
                      ("Sign-in", "Signing")]


def test_numbers_years_dates_and_numbered_twins_are_never_suggested():
    kept = rank_suggestions(ISSUE_EXAMPLE)
    assert len(kept) == 4
    assert not any(is_number_or_date(name) for s in kept for name in (s.a, s.b))
    assert "BREATHE-2" not in {s.a for s in kept}  # the second trial is not the third


def test_sample_corpus_suggestions_lead_with_translations_and_hold_no_dates(sample_workspace):
    found = sample_workspace.corrections.suggestions()
    assert len(found) >= 4
    ranks = [evidence_rank(s) for s in found]
    assert ranks == sorted(ranks)
    assert {(s.a, s.b) for s in found[:3]} >= {("token cache", "令牌缓存"), ("Auth Service", "认证服务")}
    assert EVIDENCE_RANKS[ranks[0]] == "translation"
    assert not any(is_number_or_date(name) for s in found for name in (s.a, s.b))


def test_a_page_of_suggestions_carries_the_total(sample_workspace):
    found = sample_workspace.corrections.suggestions()
    page = sample_workspace.corrections.suggestion_page(2, 2)
    assert page.total == len(found) and page.pages == -(-len(found) // 2)
    assert list(page.suggestions) == found[2:4] and page.first == 3
    with pytest.raises(ValueError, match=f"page 99 does not exist: {len(found)} suggestions make"):
        page_of(found, 99, 2)


def test_cli_suggestions_pages_with_total(sample_workspace, capsys):
    code = main(["--workspace", str(sample_workspace.path), "suggestions", "--page", "2", "--per-page", "2", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["page"] == 2 and payload["total"] == len(sample_workspace.corrections.suggestions())
    assert [s["rank"] for s in payload["suggestions"]] == [3, 4]
    assert {"a", "b", "score", "reason", "evidence"} <= set(payload["suggestions"][0])
    code = main(["--workspace", str(sample_workspace.path), "suggestions", "--page", "99"])
    err = capsys.readouterr().err
    assert code == 2 and "page 99 does not exist" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# Letters, both kinds of parenthesis, spaces, line breaks, separators and the alias words: the
# texts where reading a parenthesis's left side back from it could part from the full pattern.
_DECLARATION_TEXT = st.lists(st.sampled_from(["a", "Bc", "认证", " ", "  ", "\n", "\t", "(", ")", "（", "）", ",", "，",
                                              ".", ";", "。", "x" * 70, " also called ", " aka ", "又称", "Auth Service"]),
                             max_size=40).map("".join)


@settings(max_examples=1000, deadline=None)
@given(_DECLARATION_TEXT)
@example(" (a)")  # spaces alone before a parenthesis: the pattern takes the first
@example("x\n \t(a)")
@example("a\t(b)")  # the spaces between a name and its parenthesis are not the name's
@example("x" * 85 + "(b)")  # at most 80 characters
@example("A (B) (C) D, also called E")
def test_declarations_are_the_full_patterns_matches(text):
    expected = [(m.group(1), m.group(2), m.group(0)) for m in _PAREN_RE.finditer(text)]
    expected += [(m.group(1) or m.group(3), m.group(2) or m.group(4), m.group(0)) for m in _AKA_RE.finditer(text)]
    assert _declarations(text) == expected


def test_past_the_spelling_limit_only_the_most_mentioned_names_are_compared(sample_workspace, monkeypatch):
    import workbench.workspace.corrections as merges

    def compared(found):  # the pairs whose only evidence is comparing the names themselves
        return {(s.a, s.b) for s in found if set(s.reason.split(" + ")) <= {"name similarity", "embedding similarity"}}

    everything = compared(sample_workspace.corrections.suggestions())
    at = {e.name: i for i, e in enumerate(sample_workspace.entities())}  # most mentioned first
    assert len(everything) >= 2
    limit = max(max(at[a], at[b]) for a, b in everything)  # leaves out the pair of the least mentioned name
    monkeypatch.setattr(merges, "SPELLING_SUGGESTION_LIMIT", limit)
    bounded = compared(sample_workspace.corrections.suggestions())
    assert bounded == {(a, b) for a, b in everything if at[a] < limit and at[b] < limit} != everything
