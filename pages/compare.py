"""Compare: one question, several retrieval strategies side by side, with the graph evidence."""

import json

import streamlit as st

import ui
from workbench.context import build_context
from workbench.retrieve import MODES, RETRIEVERS, retrieve
from workbench.safe_text import printable
from workbench.vectors import NeedsRepair
from workbench.views.retrieval import (communities_used_frame, hit_card, impact_frame, path_frame, path_line,
                                       path_text, rank_overlap, seeds_text, shared_hits, walk_frames)

ui.keep_widget_state()
st.title("Compare retrieval strategies")
st.caption("Ask one question and see what each strategy returns. Chunk retrieval finds text that mentions the "
           "question; graph strategies follow cited relations across documents.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

question = st.text_input("Question", key=ui.kept("compare", "question", "If Redis goes down, what breaks?"))
chosen = st.multiselect("Strategies", MODES, key=ui.kept("compare", "modes", [m for m in ("graphrag", "hybrid", "paths")
                                                                             if m in MODES]),
                        help="\n".join(f"{m}: {RETRIEVERS[m].description}" for m in MODES))
k = st.slider("Hits per strategy", 1, 20, key=ui.kept("compare", "k", ws.settings.retrieval.k))
asked = (question.strip(), tuple(chosen), k)
if st.button("Compare", type="primary", key="compare.run") or "compare.results" not in st.session_state:
    if asked[0] and chosen:
        with st.spinner("Retrieving..."):
            try:
                st.session_state["compare.results"] = (asked, {mode: retrieve(ws, asked[0], mode, k) for mode in chosen})
            except NeedsRepair as exc:  # a store missing or damaged: say so and how to fix it, no empty answer
                st.error(printable(exc))
                st.stop()
if "compare.results" not in st.session_state:
    st.info("Type a question, choose at least one strategy and press Compare.")
    st.stop()
(shown_question, _, _), results = st.session_state["compare.results"]
if (shown_question, tuple(results), k) != asked:
    st.caption(f"Showing the results for “{ui.md_text(shown_question)}”; press Compare to run the new settings.")

shared = shared_hits(results)
side_key = ui.kept("compare", "side_by_side", list(results)[:3])
st.session_state[side_key] = [m for m in st.session_state[side_key] if m in results] or list(results)[:3]
side = st.multiselect("Side by side (two or three; the others are in tabs below)", list(results), key=side_key,
                      max_selections=3)
st.caption(f"★ marks a chunk returned by two or more strategies ({len(shared)} such chunks).")


def show_result(mode: str) -> None:
    result = results[mode]
    context = result.graph_context
    st.subheader(mode)
    st.caption(f"mode used: {result.mode_used}" + (f" — {ui.md_text(result.reason)}" if result.reason else ""))
    if context.seeds:
        st.caption(f"seeds: {ui.md_text(seeds_text(context.seeds))} · entities explored: {len(context.nodes)}")
    for number, path in enumerate(context.paths[:3], 1):
        st.text(f"Cited path {number}: {path_text(path)}")
    if not result.hits:
        st.write("No hits.")
    for hit in result.hits:
        with st.container(border=True):
            heading, text, why = hit_card(hit, [m for m in shared.get(hit.chunk_id, []) if m != mode])
            st.text(heading)
            st.text(text)
            st.caption(ui.md_text(why))


if side:
    for column, mode in zip(st.columns(len(side)), side):
        with column:
            show_result(mode)
others = [m for m in results if m not in side]
if others:
    for tab, mode in zip(st.tabs(others), others):
        with tab:
            show_result(mode)

st.subheader("Rank overlap")
st.caption("Each chunk any strategy returned, with its rank in each (blank: not returned).")
st.dataframe(rank_overlap(results), hide_index=True, width="stretch")

for mode, result in results.items():
    context = result.graph_context
    if context.empty:
        continue
    st.subheader(f"What {mode} walked")
    if context.reading:
        st.caption(f"Structural reading: {context.reading} (the cited paths below answer the question).")
    if context.seeds:
        st.text("Seeds: " + seeds_text(context.seeds))
    if context.nodes or context.triples:
        nodes, triples = walk_frames(context)
        left, right = st.columns([1, 2])
        left.caption("Entities of the context" + (", ranked by the walk" if context.seeds else ""))
        left.dataframe(nodes, hide_index=True, width="stretch")
        right.caption("Cited triples among them (the graph context)")
        right.dataframe(triples, hide_index=True, width="stretch")
    if context.impact is not None:
        st.subheader(f"If {ui.md_text(context.impact.failed)} fails ({mode})")
        st.dataframe(impact_frame(context.impact), hide_index=True, width="stretch")
        st.text("Survivors (not impacted): " + (", ".join(map(printable, context.impact.survivors)) or "none"))
    for number, path in enumerate(context.paths, 1):
        st.text(f"Path {number}: {path_line(path)} (corroboration {path.corroboration})")
        st.dataframe(path_frame(path), hide_index=True, width="stretch")
    if context.communities:
        st.dataframe(communities_used_frame(context), hide_index=True, width="stretch")

for mode, result in results.items():
    with st.expander(f"Assembled context: {mode}"):
        st.code(printable(build_context(ws, result).markdown, keep_newlines=True), language="markdown", wrap_lines=True)
st.download_button("Download the results (JSON)", key="compare.download", mime="application/json",
                   file_name="compare.json", data=json.dumps({"question": shown_question, "results": {
                       mode: result.to_json() for mode, result in results.items()}}, ensure_ascii=False, indent=1))
