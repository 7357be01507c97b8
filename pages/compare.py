"""Compare: one question, several retrieval strategies side by side, the structural answer first."""

import json

import streamlit as st

import ui
import ui_widgets
from workbench.answer.material import build_context
from workbench.retrieve import MODES, RETRIEVERS, retrieve
from workbench.retrieve.cache import indexes_for
from workbench.text.safe_text import printable
from workbench.vectors.index import NeedsRepair
from workbench.views.chunks import human_date
from workbench.views.wording import fallback_notice, plain_reason
from workbench.views.compare import (answer_first, highlight_terms, missed_documents, newer_first, question_entities,
                                     short_why, superseded_by)
from workbench.views.retrieval import (communities_used_frame, impact_frame, longest_chains, path_frame, path_line,
                                       path_text, rank_overlap, seeds_text, shared_hits, walk_frames)

ui.keep_widget_state()
st.title("Compare retrieval strategies")
st.caption("Ask one question and see what each strategy returns. Chunk retrieval finds text that mentions the "
           "question; graph strategies follow cited relations across documents.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

URL = [ui.UrlField("q", "keep.compare.question"), ui.UrlField("modes", "keep.compare.modes", "list", tuple(MODES)),
       ui.UrlField("k", "keep.compare.k", "int", bounds=(1, 20)), ui.UrlField("as_of", "keep.compare.as_of", "date"),
       ui.UrlField("since", "keep.compare.since", "date"), ui.UrlField("until", "keep.compare.until", "date")]
ui.view_from_url("compare", URL)  # a reload or a pasted link shows the view it names
question = st.text_input("Question", key=ui.kept("compare", "question", "If Redis goes down, what breaks?"))
chosen = st.multiselect("Strategies", MODES, key=ui.kept("compare", "modes", [m for m in ("graphrag", "hybrid", "paths")
                                                                             if m in MODES]),
                        help="\n".join(f"{m}: {RETRIEVERS[m].description}" for m in MODES))
k = st.slider("Hits per strategy", 1, 20, key=ui.kept("compare", "k", ws.settings.retrieval.k))
as_of_col, since_col, until_col = st.columns(3)
as_of = as_of_col.date_input("As of", value=None, key="keep.compare.as_of", format="YYYY-MM-DD",
                             help="The day the question is asked on: “last month” is read against it, and a note "
                                  "is only marked superseded by notes written by then. Empty: today.")
since = since_col.date_input("Since", value=None, key="keep.compare.since", format="YYYY-MM-DD",
                             help="Keep only hits dated on or after this day.")
until = until_col.date_input("Until", value=None, key="keep.compare.until", format="YYYY-MM-DD",
                             help="Keep only hits dated on or before this day.")
asked = (question.strip(), tuple(chosen), k, as_of, since, until)
ui.view_to_url(URL)
if not asked[0]:
    st.session_state.pop("compare.results", None)  # no question: no answer to an older one
if st.button("Compare", type="primary", key="compare.run") or "compare.results" not in st.session_state:
    if asked[0] and chosen:
        with st.spinner("Retrieving..."):
            try:
                st.session_state["compare.results"] = (asked, {
                    mode: retrieve(ws, asked[0], mode, k, since=since, until=until, as_of=as_of) for mode in chosen})
            except NeedsRepair as exc:  # a store missing or damaged: say so and how to fix it, no empty answer
                st.error(printable(exc))
                st.stop()
            except ValueError as exc:
                st.error(ui.md_text(exc))
if "compare.results" not in st.session_state:
    st.info("Type a question, choose at least one strategy and press Compare.")
    st.stop()
(shown_question, _, _, shown_as_of, _, _), results = st.session_state["compare.results"]
if (shown_question, tuple(results), k, as_of, since, until) != asked:
    st.caption(f"Showing the results for “{ui.md_text(shown_question)}”; press Compare to run the new settings.")
for window, ignored in dict.fromkeys((r.stats.time_window.window, r.stats.time_window.ignored)
                                     for r in results.values() if r.stats.time_window is not None):
    st.caption(ui.md_text(f"Time window: {human_date(window.since) or 'any time'} to {human_date(window.until) or 'now'}"
                          + (f" (from “{window.phrase}”)" if window.phrase else "")
                          + (": no dated source falls in it, so it was not applied" if ignored else "")))

answer = answer_first(ws, shown_question)
if answer is not None:
    with st.container(border=True):
        st.markdown(f"**{ui.md_text(answer.asked)}?** {ui.md_text(answer.headline)}")
        if answer.kind == "impact":
            st.markdown("**Still standing:** " + (ui.md_text(", ".join(map(printable, answer.survivors))) or "nothing"))
            spread = ", ".join(relation.replace("_", " ").casefold() for relation in ws.graph.impact_relations[:3])
            st.caption(f"Failure spreads along dependencies only ({ui.md_text(spread)}...): "
                       f"{answer.left_out} people, teams, incidents and other entities with no dependency relation "
                       "are left out.")
        chains = answer.chains  # every entity listed lies on one of these cited chains
        for chain in chains:
            st.text("Cited path: " + path_text(chain))
        if chains:
            hops = [hop for chain in chains for hop in chain.hops]
            ui_widgets.citation_picker(ws, [c for hop in hops for c in hop.chunks], key="compare.answer.open",
                               documents={c: d for hop in hops for c, d in zip(hop.chunks, hop.documents)})
        st.caption("Read off the graph from the question alone, the same for every strategy below.")

shared = shared_hits(results)
dates = {doc: d.date for doc, d in indexes_for(ws).documents.items()}  # read once per workspace version
titles = {doc: d.title for doc, d in indexes_for(ws).documents.items()}
superseded = superseded_by(indexes_for(ws).outdated, dates, shown_as_of)
missed = missed_documents(results)
named = [ws.graph.name(key) for key in question_entities(ws, shown_question)]  # what every column says it names
st.caption(f"★ marks a chunk returned by two or more strategies ({len(shared)} such chunks).")


def show_result(mode: str) -> None:
    result = results[mode]
    context = result.graph_context
    st.subheader(mode)
    notice = fallback_notice(result.mode_requested, result.mode_used, result.reason)
    if notice:
        st.warning(ui.md_text(notice))
    st.caption(f"mode used: {result.mode_used}" + (f" — {ui.md_text(plain_reason(result.reason, named))}" if result.reason
                                                    else ""))
    if missed[mode]:
        st.caption(ui.md_text(f"{mode} missed {', '.join(missed[mode][:6])}"
                              + (f" and {len(missed[mode]) - 6} more" if len(missed[mode]) > 6 else "")))
    if context.seeds:
        st.caption(f"seeds: {ui.md_text(seeds_text(context.seeds))} · entities explored: {len(context.nodes)}")
    if context.themes:  # a question asking for the themes: the themes, largest first, each with its cited points
        st.markdown("**The themes, largest first**")
        for number, theme in enumerate(context.communities, 1):
            st.markdown(f"{number}. **{ui.md_text(theme.title)}** ({theme.size} entities, {theme.passages} passages)")
            for point, chunk in zip(theme.points, theme.citations):
                st.caption(ui.md_text(f"{' '.join(point.split())} [{chunk}]"))
    chains = longest_chains(context.paths)  # the whole chains, not the one-hop paths they extend
    for number, path in enumerate(chains[:3], 1):
        st.text(f"Cited path {number}: {path_text(path)}")
    if len(chains) > 3:
        st.caption(f"{len(chains) - 3} more cited paths under “What {mode} walked” below.")
    if not result.hits:
        st.write("No hits.")
    # A note another hit supersedes comes after it (a note's own words, accepted, or its front matter).
    ranked = {hit.chunk_id: hit.rank for hit in result.hits}
    for number, hit in enumerate(newer_first(result.hits, superseded)):
        with st.container(border=True):
            also = [m for m in shared.get(hit.chunk_id, []) if m != mode]
            title = titles.get(hit.document)
            st.markdown(f"**#{hit.rank} · {ui.md_text(title or hit.document)}**" + (" ★" if also else "")
                        + (f"  \n:gray[{ui.md_text(hit.document)}]" if title else ""))
            st.caption(ui.md_text(" · ".join(part for part in (
                human_date(hit.time) or "undated", f"also in {', '.join(also)}" if also else "") if part)))
            if hit.document in superseded:
                newer = ", ".join(f"{d.rsplit('/', 1)[-1]} ({human_date(dates.get(d))})" for d in superseded[hit.document])
                st.markdown(f":orange-badge[superseded] by {ui.md_text(newer)}"
                            + (f" (ranked #{ranked[hit.chunk_id]} by {mode}, shown after the newer note)"
                               if ranked[hit.chunk_id] != hit.rank else ""),
                            help="A later note contradicts or supersedes this one: its front matter says so, or its "
                                 "text does and a person accepted that on the Corpus page.")
            text = hit.text if len(hit.text) < 600 else hit.text[:600] + "…"
            st.text(printable(text, keep_newlines=True))
            st.caption(ui.md_text(short_why(hit.why)))
            if st.button("Open chunk", key=f"compare.open.{mode}.{number}", type="tertiary",
                         help="Its text, document, date, the chunks around it and the edges it states"):
                ui_widgets.chunk_dialog(ws, hit.chunk_id, highlight_terms(hit.why))
            with st.expander("Details"):
                st.caption(ui.md_text(f"{hit.why.describe()} Score {hit.score:.3g} on {mode}'s own scale; "
                                      f"chunk {hit.chunk_id}."))


modes = list(results)
for row in range(0, len(modes), 4):  # every chosen strategy in view, at most four to a row
    for column, mode in zip(st.columns(len(modes[row:row + 4])), modes[row:row + 4]):
        with column:
            show_result(mode)

st.subheader("Rank overlap")
st.caption("Each chunk any strategy returned, with its rank in each (blank: not returned).")
st.dataframe(rank_overlap(results), hide_index=True, width="stretch",
             column_config={"strategies": st.column_config.NumberColumn("found by", help="How many strategies returned it")})

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
        left.dataframe(nodes, hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
        right.caption("Cited triples among them (the graph context)")
        right.dataframe(triples, hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
    if context.impact is not None:
        st.subheader(f"If {ui.md_text(context.impact.failed)} fails ({mode})")
        st.dataframe(impact_frame(context.impact), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
        st.text("Survivors (not impacted): " + (", ".join(map(printable, context.impact.survivors)) or "none"))
    for number, path in enumerate(context.paths, 1):
        st.text(f"Path {number}: {path_line(path)} (corroboration {path.corroboration})")
        st.dataframe(path_frame(path), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
    if context.communities:
        st.dataframe(communities_used_frame(context), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)

cited = [hit.chunk_id for result in results.values() for hit in result.hits] + [
    c for result in results.values() for hop in result.graph_context.triples for c in hop.chunks] + [
    c for result in results.values() for use in result.graph_context.communities for c in use.citations]
ui_widgets.citation_picker(ws, cited, key="compare.open_any", label="Open any chunk cited on this page",
                   documents={hit.chunk_id: hit.document for result in results.values() for hit in result.hits})
for mode, result in results.items():
    with st.expander(f"Assembled context: {mode}"):
        st.code(printable(build_context(ws, result).markdown, keep_newlines=True), language="markdown", wrap_lines=True)
st.download_button("Download the results (JSON)", key="compare.download", mime="application/json",
                   file_name="compare.json", data=json.dumps({"question": shown_question, "results": {
                       mode: result.to_json() for mode, result in results.items()}}, ensure_ascii=False, indent=1))
