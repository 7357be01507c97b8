"""The names found in each passage are reused by the next derivation where they stand, and the
result is always the passage layer a full scan gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context_graph.name_scan import FILE_NAME, load_name_scan
from workbench.context_graph.passages import NameMatcher, NameScan, link_passages

WORDS = ["Oslo", "Ann", "Lee", "Bank", "of", "Norway", "Redis", "Cache", "the", "River", "Wiley", "Blackwell"]

names = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join), max_size=12)
texts = st.lists(st.lists(st.sampled_from(WORDS + ["went", "to", "and", "lee", "oslo's"]), max_size=14)
                 .map(" ".join), min_size=1, max_size=8)


def layer(chunks: list[tuple[str, str]], forms: dict[str, list[str]], previous: NameScan | None = None):
    return link_passages(chunks, {}, forms, {}, max_entity_passages=100, synonym_threshold=1.0, previous=previous)


def forms_of(written: list[str]) -> dict[str, list[str]]:
    forms: dict[str, list[str]] = {}
    for name in written:
        forms.setdefault(name.casefold().replace(" ", "")[:6], []).append(name)  # a short key: forms share keys
    return forms


@settings(max_examples=200, deadline=None)
@given(before=names, after=names, bodies=texts, added=texts)
def test_a_layer_made_with_the_last_scan_equals_a_full_scan(before, after, bodies, added):
    old_chunks = [(f"c{i}", text) for i, text in enumerate(bodies)]
    new_chunks = old_chunks + [(f"n{i}", text) for i, text in enumerate(added)]
    first = layer(old_chunks, forms_of(before))
    reused = layer(new_chunks, forms_of(after), previous=first.scan)
    full = layer(new_chunks, forms_of(after))
    assert reused.entities_of == full.entities_of
    assert reused.chunks_of == full.chunks_of
    assert reused.scan.found == full.scan.found


def test_a_passage_that_writes_a_new_name_is_read_again_and_the_others_are_not():
    chunks = [("a", "Ann Lee moved to Oslo."), ("b", "Redis backs the cache."), ("c", "Lee Bank is in Bergen.")]
    first = layer(chunks, {"annlee": ["Ann Lee"], "redis": ["Redis"]})
    reads = []

    class Counting(NameMatcher):
        def find(self, text, capitalised_only=True):
            reads.append(text)
            return super().find(text, capitalised_only)

    forms = {"annlee": ["Ann Lee"], "redis": ["Redis"], "oslo": ["Oslo"]}
    matcher = Counting(forms)
    reuse = first.scan.reusable(matcher)
    assert reuse("a", chunks[0][1]) is None  # it writes "Oslo", a name added since
    assert reuse("b", chunks[1][1]) == ("redis",)
    assert reuse("c", chunks[2][1]) == ()
    assert reuse("new", "Oslo") is None  # a passage the scan never saw
    assert not reads


def test_many_changed_names_read_every_passage_again():
    chunks = [("a", "Nothing here.")]
    first = layer(chunks, {})
    many = NameMatcher({f"k{i}": [f"Name{i}"] for i in range(600)})
    assert first.scan.reusable(many)("a", "Nothing here.") is None


def test_a_workspace_keeps_the_scan_and_a_write_derives_what_a_full_scan_derives(sample_copy):
    ws, corpus = sample_copy
    kept = load_name_scan(ws.path)
    assert kept is not None and kept.found == ws.graph.passages.scan.found
    # A new note whose title names a word older passages write: they must be read again.
    (corpus / "kubernetes.md").write_text("# Kubernetes\n\nKubernetes runs the Auth Service and the token cache.\n")
    ws.ingest([corpus])
    graph = ws.derivation.assemble()  # no scan: every passage read
    a, b = ws.graph.passages, graph.passages
    assert a.entities_of == b.entities_of and a.chunks_of == b.chunks_of and a.title_links == b.title_links
    assert a.synonyms == b.synonyms and a.scan.synonyms.pairs == b.synonyms
    assert load_name_scan(ws.path).found == b.scan.found
    assert load_name_scan(ws.path).synonyms == b.scan.synonyms
    assert sum("kubernetes" in keys for keys in b.scan.found.values()) > 1  # older passages name it too


def test_a_damaged_scan_is_ignored_and_replaced(sample_copy):
    ws, corpus = sample_copy
    (ws.path / FILE_NAME).write_bytes(b"PK\x03\x04 damaged")
    assert load_name_scan(ws.path) is None
    (corpus / "extra.md").write_text("# Extra\n\nThe Billing Service calls Redis.\n")
    ws.ingest([corpus])
    graph = ws.derivation.assemble()
    assert ws.graph.passages.entities_of == graph.passages.entities_of
    assert load_name_scan(ws.path) is not None


def test_repair_removes_the_scan_and_makes_it_again(sample_private):
    ws = sample_private
    (ws.path / FILE_NAME).write_bytes(b"junk")
    ws.repair()
    assert load_name_scan(ws.path) is not None


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("AbZz09 -'\u2019.&_\tßİéЖ") + ["Ann", "Lee's", "Oslo"]), max_size=12).map("".join))
def test_a_name_lowercased_without_a_split_has_the_words_a_split_gives(text):
    from workbench.extract.names import joined_words, name_words

    assert joined_words(text) == " ".join(word for word, _, _ in name_words(text))


def test_a_built_matcher_makes_its_prefix_set_only_once_many_long_texts_are_read_and_finds_the_same():
    """A write reads again only its own passages: the set of name prefixes (about 1 s at 61k
    passages) is made once many long texts are read, and matching is the same before and after."""
    from workbench.context_graph import passages

    forms = {"oslo": ["Oslo"], "annlee": ["Ann Lee"], "bon": ["Bank of Norway"], "rc": ["Redis Cache"]}
    long = [" ".join(["Ann Lee went to the Bank of Norway in Oslo", f"day {i}", *["and Redis Cache"] * 20]) for i in
            range(passages._PREFIXES_AFTER_TEXTS + 3)]
    matcher = NameMatcher(forms)
    found = []
    for i, text in enumerate(long):
        found.append(matcher.find(text))
        assert (matcher._prefixes is None) == (i < passages._PREFIXES_AFTER_TEXTS)
    assert matcher.find("Ann Lee in Oslo") and matcher._prefixes is not None
    assert found == [["annlee", "bon", "oslo", "rc"]] * len(long)
