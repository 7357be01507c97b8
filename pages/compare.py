"""Compare: one question, several retrieval strategies side by side, with the graph evidence."""

import streamlit as st

import ui
from workbench.context import build_context
from workbench.explain import graph_walk, rank_overlap, walk_frames, why_sentence
from workbench.retrieve import MODES, RETRIEVERS, retrieve
from workbench.visual import impact_frame, path_frame, shared_hits

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
            st.session_state["compare.results"] = (asked, {mode: retrieve(ws, asked[0], mode, k) for mode in chosen})
if "compare.results" not in st.session_state:
    st.info("Type a question, choose at least one strategy and press Compare.")
    st.stop()
(shown_question, _, _), results = st.session_state["compare.results"]
if (shown_question, tuple(results), k) != asked:
    st.caption(f"Showing the results for “{shown_question}”; press Compare to run the new settings.")

shared = shared_hits(results)
side_key = ui.kept("compare", "side_by_side", list(results)[:3])
st.session_state[side_key] = [m for m in st.session_state[side_key] if m in results] or list(results)[:3]
side = st.multiselect("Side by side (two or three; the others are in tabs below)", list(results), key=side_key,
                      max_selections=3)
st.caption(f"★ marks a chunk returned by two or more strategies ({len(shared)} such chunks).")


def show_result(mode: str) -> None:
    result = results[mode]
    st.subheader(mode)
    st.caption(f"mode used: {result.mode_used}" + (f" — {result.reason}" if result.reason else ""))
    walk = graph_walk(result)
    if walk.seeds:
        st.caption("seeds: " + ", ".join(f"{name} ({score:.2f})" if score is not None else name
                                         for name, score in walk.seeds)
                   + f" · entities explored: {result.stats.get('entities_explored', len(walk.nodes))}")
    if not result.hits:
        st.write("No hits.")
    for hit in result.hits:
        with st.container(border=True):
            mark = (" ★ also in " + ", ".join(m for m in shared[hit.chunk_id] if m != mode)
                    if hit.chunk_id in shared else "")
            st.text(f"#{hit.rank} · {hit.score:.3f} · chunk {hit.chunk_id}{mark}\n{hit.document}")
            st.text(hit.text if len(hit.text) < 600 else hit.text[:600] + "…")
            st.caption(why_sentence(hit.why))


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
    context = result.graph_context or {}
    if context.get("kind") == "impact":
        st.subheader(f"If {context['failed']} fails ({mode})")
        st.dataframe(impact_frame(context["impact"]), hide_index=True, width="stretch")
        st.text("Survivors (not impacted): " + (", ".join(context.get("survivors", [])) or "none"))
    elif context.get("kind") == "paths":
        st.subheader(f"Paths from {context.get('from')} to {context.get('to')} ({mode})")
        for number, path in enumerate(context.get("paths", []), 1):
            st.text(f"Path {number}: " + " → ".join(path.get("nodes", [])))
            st.dataframe(path_frame(path), hide_index=True, width="stretch")
    elif not graph_walk(result).empty:
        walk = graph_walk(result)
        st.subheader(f"What {mode} walked")
        st.text("Seeds: " + (", ".join(name for name, _ in walk.seeds) or "none"))
        nodes, triples = walk_frames(walk)
        left, right = st.columns([1, 2])
        left.caption("Entities ranked by the walk")
        left.dataframe(nodes, hide_index=True, width="stretch")
        right.caption("Cited triples among them (the graph context)")
        right.dataframe(triples, hide_index=True, width="stretch")

for mode, result in results.items():
    with st.expander(f"Assembled context: {mode}"):
        st.code(build_context(ws, result).markdown, language="markdown", wrap_lines=True)
