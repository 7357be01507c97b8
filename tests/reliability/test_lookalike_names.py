"""Issue 27, item 4: look-alike names. "Rеdis" (a Cyrillic е) printed exactly like "Redis" in
``impact Redis``, and no merge was suggested, for the fullwidth "Ｒｅｄｉｓ" either."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.context_graph.merge_suggestions import lookalike_suggestions
from workbench.text.name_keys import name_key, skeleton
from workbench.text.safe_text import mark_mixed_scripts, mixed_scripts, printable

IMPOSTOR = "R\u0435dis"  # Latin R, Cyrillic е, Latin dis
FULLWIDTH = "\uff32\uff45\uff44\uff49\uff53"  # Ｒｅｄｉｓ


@pytest.fixture
def lookalike_corpus(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "auth.md").write_text("# Auth\n\nThe Auth Service depends on Redis.\n", encoding="utf-8")
    (folder / "payments.md").write_text(f"# Payments\n\nThe Payments API depends on {IMPOSTOR}.\n", encoding="utf-8")
    (folder / "wide.md").write_text(f"# Wide\n\nThe Billing Service depends on {FULLWIDTH}.\n", encoding="utf-8")
    return folder


def test_fullwidth_names_fold_into_the_plain_name_and_lookalikes_do_not():
    assert name_key(FULLWIDTH) == name_key("Redis") == "redis"
    assert name_key(IMPOSTOR) != "redis" and name_key(skeleton(IMPOSTOR)) == "redis"


def test_mixed_script_words_are_marked_once_wherever_printed():
    assert mixed_scripts(IMPOSTOR) == ("Latin", "Cyrillic")
    assert mixed_scripts("Москва") == () and mixed_scripts("Zoë") == () and mixed_scripts("认证Service") == ()
    shown = printable(f"{IMPOSTOR} and Redis")
    assert shown == f"{IMPOSTOR} [mixed scripts: Latin+Cyrillic] and Redis"
    assert printable(shown) == shown and mark_mixed_scripts(shown) == shown


@given(st.text(max_size=30))
def test_name_key_stays_idempotent_with_nfkc(name):
    assert name_key(name_key(name)) == name_key(name)


def test_a_lookalike_is_suggested_with_the_name_it_imitates():
    found = lookalike_suggestions(["Redis", IMPOSTOR, "Kafka", "Σigma"])
    assert [(s.a, s.b) for s in found] == [(IMPOSTOR, "Redis")]
    assert "mixes Latin+Cyrillic letters" in found[0].reason


def test_impact_marks_the_lookalike_and_suggests_the_merge(lookalike_corpus, make_workspace, run_cli):
    ws = make_workspace()
    ws.ingest([lookalike_corpus])
    names = {e.name for e in ws.entities()}
    assert IMPOSTOR in names and FULLWIDTH not in names  # the fullwidth one is Redis itself
    redis = ws.graph.impacted_by("Redis")
    impacted = {name for name, _ in redis.impacted}
    assert "Billing Service" in impacted and "Payments API" not in impacted
    suggestions = [(s.a, s.b) for s in ws.corrections.suggestions(use_embeddings=False)]
    assert (IMPOSTOR, "Redis") in suggestions or ("Redis", IMPOSTOR) in suggestions
    ws.close()
    done = run_cli("--workspace", ws.path, "impact", IMPOSTOR)
    assert done.returncode == 0, done.stderr
    assert f"{IMPOSTOR} [mixed scripts: Latin+Cyrillic]" in done.stdout


def test_the_canonicalization_page_marks_the_lookalike_and_offers_the_merge(lookalike_corpus, make_workspace,
                                                                            monkeypatch):
    from tests.test_app import open_app, page

    ws = make_workspace()
    ws.ingest([lookalike_corpus])
    ws.close()
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    suggested = [m.value for m in at.markdown if "↔" in m.value]
    [lookalike] = [m for m in suggested if "look" in m and "alike" in m]
    assert "Redis" in lookalike and IMPOSTOR in lookalike
    assert "mixed scripts" in lookalike and "Latin\\+Cyrillic" in lookalike  # the mark, escaped for Markdown
