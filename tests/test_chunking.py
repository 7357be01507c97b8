"""Tests for workbench.ingest.chunking: paragraph, sentence and message chunks with exact offsets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.ingest.chunking import chunk_document, chunk_id, iter_sentences
from workbench.model import Document, Segment


def make_doc(text: str, segments: tuple[Segment, ...] = (), date: str | None = None, doc_id: str = "d.md") -> Document:
    return Document(id=doc_id, source_path="/d.md", title="d", kind="markdown", text=text,
                    content_hash="", date=date, segments=segments)


def assert_chunk_invariants(doc: Document, chunks, max_chars: int) -> None:
    covered = bytearray(len(doc.text))
    previous_end = 0
    for ordinal, chunk in enumerate(chunks):
        assert chunk.ordinal == ordinal
        assert chunk.text == doc.text[chunk.start:chunk.end]
        assert chunk.text and chunk.text == chunk.text.strip()
        assert 0 < len(chunk.text) <= max_chars
        assert chunk.start >= previous_end  # in order, non-overlapping
        previous_end = chunk.end
        covered[chunk.start:chunk.end] = b"\x01" * (chunk.end - chunk.start)
    uncovered = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
    assert uncovered == []


# Pieces rich in the characters the chunker cares about: sentence ends, blank lines, odd spaces.
text_pieces = st.sampled_from(list("ab cd.!?\n\t。！？中文”)") + ["\n\n", ". ", "\u3000", "\u2029", "word "])
chunky_text = st.lists(text_pieces, max_size=300).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=chunky_text, max_chars=st.integers(1, 120))
def test_chunks_are_exact_ordered_bounded_and_cover_every_character(text, max_chars):
    doc = make_doc(text)
    assert_chunk_invariants(doc, chunk_document(doc, max_chars=max_chars), max_chars)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400), max_chars=st.integers(1, 80))
def test_chunk_invariants_hold_for_arbitrary_unicode(text, max_chars):
    doc = make_doc(text)
    assert_chunk_invariants(doc, chunk_document(doc, max_chars=max_chars), max_chars)


@settings(max_examples=150, deadline=None)
@given(messages=st.lists(chunky_text.filter(bool), min_size=1, max_size=6),
       max_chars=st.integers(5, 60))
def test_message_chunks_never_cross_segments(messages, max_chars):
    parts, segments, offset = [], [], 0
    for i, message in enumerate(messages):
        if parts:
            offset += 2
        parts.append(message)
        segments.append(Segment(offset, offset + len(message), f"s{i}", f"2024-01-0{i + 1}"))
        offset += len(message)
    doc = make_doc("\n\n".join(parts), tuple(segments))
    chunks = chunk_document(doc, max_chars=max_chars)
    assert_chunk_invariants(doc, chunks, max_chars)
    for chunk in chunks:
        owner = [s for s in segments if s.start <= chunk.start and chunk.end <= s.end]
        assert len(owner) == 1 and owner[0].speaker == chunk.speaker and owner[0].timestamp == chunk.timestamp


@settings(max_examples=200, deadline=None)
@given(text=chunky_text, max_chars=st.integers(1, 120))
def test_packed_chunks_join_whole_unpacked_chunks_that_fit_and_keep_every_invariant(text, max_chars):
    doc = make_doc(text)
    unpacked, packed = chunk_document(doc, max_chars=max_chars), chunk_document(doc, max_chars=max_chars, pack=True)
    assert_chunk_invariants(doc, packed, max_chars)
    starts, ends = {c.start for c in unpacked}, {c.end for c in unpacked}
    assert all(c.start in starts and c.end in ends for c in packed)  # whole chunks joined, none cut
    for first, second in zip(packed, packed[1:]):  # greedy: the next chunk did not fit
        assert min(c.end for c in unpacked if c.start >= second.start) - first.start > max_chars


@settings(max_examples=100, deadline=None)
@given(messages=st.lists(chunky_text.filter(bool), min_size=1, max_size=6), max_chars=st.integers(5, 60))
def test_packing_never_joins_a_conversations_messages(messages, max_chars):
    text = "\n\n".join(messages)
    segments, offset = [], 0
    for i, message in enumerate(messages):
        segments.append(Segment(offset, offset + len(message), f"s{i}"))
        offset += len(message) + 2
    doc = make_doc(text, tuple(segments))
    assert chunk_document(doc, max_chars=max_chars, pack=True) == chunk_document(doc, max_chars=max_chars)


def test_packed_paragraphs_make_fewer_chunks_up_to_max_chars():
    sections = "\n\n".join(f"## Note {i}\n\nThe auth service {i} depends on Redis for sessions." for i in range(9))
    doc = make_doc(sections)
    unpacked, packed = chunk_document(doc, max_chars=200), chunk_document(doc, max_chars=200, pack=True)
    assert len(unpacked) == 9
    assert [c.text.count("## Note") for c in packed] == [3, 3, 3]
    assert packed[0].text == doc.text[unpacked[0].start:unpacked[2].end]


def test_each_paragraph_is_its_own_chunk():
    text = "The auth service depends on Redis for sessions.\n\nThe billing service runs on Kubernetes in prod."
    assert [c.text for c in chunk_document(make_doc(text))] == [
        "The auth service depends on Redis for sessions.", "The billing service runs on Kubernetes in prod."]


def test_tiny_heading_joins_the_next_paragraph():
    text = "# Auth\n\nThe auth service depends on Redis for its sessions."
    chunks = chunk_document(make_doc(text))
    assert len(chunks) == 1 and chunks[0].text == text


def test_a_heading_of_any_length_joins_the_paragraph_after_it():
    title = "# Postmortem 12: the deploy pipeline on the Upload Worker"  # longer than a tiny paragraph
    body = "@hana moved the Upload Worker from Nginx to Python after a long review."
    chunks = chunk_document(make_doc(f"{title}\n\n{body}\n\nAnother paragraph that stands on its own feet."))
    assert [c.text for c in chunks] == [f"{title}\n\n{body}", "Another paragraph that stands on its own feet."]


def test_nested_and_underlined_headings_join_too():
    text = "# Runbooks for the platform team\n\n## Restarting the token cache safely\n\nDrain it first."
    assert [c.text for c in chunk_document(make_doc(text))] == [text]
    underlined = "Restarting the token cache safely\n=================================\n\nDrain it first."
    assert [c.text for c in chunk_document(make_doc(underlined))] == [underlined]


def test_a_heading_before_a_long_paragraph_takes_its_first_sentences():
    title = "## Why the auth service pins its Redis client"
    body = " ".join(f"Reason number {i} is written down here." for i in range(6))
    chunks = chunk_document(make_doc(f"{title}\n\n{body}"), max_chars=100)
    assert chunks[0].text == f"{title}\n\nReason number 0 is written down here."
    assert " ".join(c.text for c in chunks[1:]) == body.removeprefix("Reason number 0 is written down here. ")


def test_a_hashtag_or_a_last_heading_is_not_joined_to_anything():
    text = "#release notes are kept in the wiki for everyone to read\n\nShort one."
    assert [c.text for c in chunk_document(make_doc(text))][0] == "#release notes are kept in the wiki for everyone to read"
    last = "The service runs on Kubernetes in every region.\n\n# Appendix: the full list of regions"
    assert [c.text for c in chunk_document(make_doc(last))] == [
        "The service runs on Kubernetes in every region.", "# Appendix: the full list of regions"]


def test_tiny_paragraph_that_does_not_fit_stays_alone():
    text = "# Auth\n\n" + "word " * 30
    chunks = chunk_document(make_doc(text), max_chars=100)
    assert chunks[0].text == "# Auth"


def test_long_paragraph_splits_on_sentences():
    sentences = [f"Sentence number {i} says something." for i in range(10)]
    chunks = chunk_document(make_doc(" ".join(sentences)), max_chars=80)
    assert all(c.text.endswith(".") for c in chunks)
    assert " ".join(c.text for c in chunks) == " ".join(sentences)
    assert all(len(c.text) <= 80 for c in chunks) and len(chunks) == 5


def test_chinese_sentences_are_split():
    text = "认证服务依赖于Redis。计费服务运行在Kubernetes上！真的吗？是的"
    assert [text[s:e] for s, e in iter_sentences(text)] == [
        "认证服务依赖于Redis。", "计费服务运行在Kubernetes上！", "真的吗？", "是的"]
    chunks = chunk_document(make_doc(text * 3), max_chars=30)
    assert all(c.text[-1] in "。！？的" for c in chunks)


def test_decimal_point_is_not_a_sentence_end():
    text = "Version 3.14 is out. It is fast."
    assert [text[s:e] for s, e in iter_sentences(text)] == ["Version 3.14 is out.", "It is fast."]


def test_over_long_sentence_is_cut_at_whitespace():
    text = " ".join(["abcdefghi"] * 50)  # 499 chars, no sentence end
    chunks = chunk_document(make_doc(text), max_chars=100)
    assert all(len(c.text) <= 100 for c in chunks)
    assert all(not c.text.startswith(" ") and c.text.endswith("abcdefghi") for c in chunks)


def test_five_megabyte_single_line_chunks_to_the_right_sizes():
    text = "x" * 5_000_000
    chunks = chunk_document(make_doc(text), max_chars=1000)
    assert len(chunks) == 5000 and {len(c.text) for c in chunks} == {1000}
    spaced = ("word " * 1_000_000).strip()
    chunks = chunk_document(make_doc(spaced), max_chars=1000)
    assert sum(len(c.text) for c in chunks) + len(chunks) - 1 == len(spaced)
    assert max(len(c.text) for c in chunks) <= 1000


def test_ids_are_stable_and_depend_on_their_inputs():
    doc = make_doc("The first paragraph is long enough to stand alone.\n\nThe second paragraph is long enough to stand alone.")
    first, second = chunk_document(doc), chunk_document(doc)
    assert [c.id for c in first] == [c.id for c in second]
    assert first[0].id == chunk_id("d.md", 0, first[0].text)
    assert len({c.id for c in first}) == 2
    assert chunk_id("d.md", 0, "x") != chunk_id("e.md", 0, "x") != chunk_id("d.md", 1, "x")
    assert len(chunk_id("d.md", 0, "x")) == 16 and int(chunk_id("d.md", 0, "x"), 16) >= 0


def test_message_chunks_keep_speaker_and_timestamp():
    text = "alice: The deploy failed.\n\nbob: Redis was full."
    segments = (Segment(0, 25, "alice", "2024-03-01T09:00:00"), Segment(27, 47, "bob", None))
    chunks = chunk_document(make_doc(text, segments, date="2024-03-01"))
    assert [(c.text, c.speaker, c.timestamp) for c in chunks] == [
        ("alice: The deploy failed.", "alice", "2024-03-01T09:00:00"),
        ("bob: Redis was full.", "bob", "2024-03-01")]


def test_short_messages_are_not_joined():
    text = "a: hi\n\nb: yo"
    chunks = chunk_document(make_doc(text, (Segment(0, 5, "a"), Segment(7, 12, "b"))))
    assert [c.text for c in chunks] == ["a: hi", "b: yo"]


def test_plain_chunks_take_the_document_date():
    chunks = chunk_document(make_doc("Some paragraph that is long enough to stand.", date="2024-05-05"))
    assert chunks[0].timestamp == "2024-05-05" and chunks[0].speaker is None


def test_whitespace_only_document_has_no_chunks():
    assert chunk_document(make_doc(" \n\n\t ")) == []
