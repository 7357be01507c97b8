"""Communities: the themes of the corpus and their sub-themes, each with its extractive report and drawn."""

import streamlit as st

import ui
import ui_widgets
from workbench.text.safe_text import printable
from workbench.views.chunks import human_date
from workbench.views.tables import communities_frame

ui.keep_widget_state()
st.title("Communities")
st.caption("Themes and sub-themes of the corpus: groups of entities and passages that the graph the graphrag walk "
           "sees ties together (Louvain on relation, co-mention, passage and title links; each theme split again "
           "into sub-themes). Each report is extractive: its title is its most representative phrase (its key phrases "
           "are listed beneath it), and every "
           "point is a sentence quoted from a cited chunk. The global retrieval mode answers corpus-wide questions "
           "from these reports.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()
with st.spinner("Finding the communities and writing their reports: the first time on a large corpus takes a "
                "minute or two, then they are stored, and each later change of the documents updates only the "
                "communities it touches."):
    summaries = ws.summaries()
reports = summaries.reports
if summaries.themes_from.behind:
    st.info(f"These are the {summaries.themes_from.statement()}: the communities are being made again from "
            "nothing (the settings, the embedding model or much of the corpus changed); reload the page to see "
            "them once they are built.")
if not reports:
    st.info(f"No community of {ws.settings.communities.min_size} or more entities: the graph is too sparse.")
    st.stop()
themes = [r for r in reports if r.level == 0] or reports
st.dataframe(communities_frame(reports), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
titles = {r.id: f"{printable(r.title)} ({r.size} entities)" for r in reports}
chosen = st.selectbox("Theme", [r.id for r in themes], format_func=titles.get,
                      key=ui.kept("communities", "id", themes[0].id))
report = next((r for r in themes if r.id == chosen), themes[0])
parts = [r.id for r in reports if r.parent == report.id]
if parts:
    whole = "(the whole theme)"
    part = st.radio(f"Sub-themes ({len(parts)})", [whole, *parts], format_func=lambda i: titles.get(i, i),
                    key=ui.kept("communities", f"part.{report.id}", whole))
    report = next((r for r in reports if r.id == part), report)

st.subheader(ui.md_text(report.title))
st.caption(f"{'Sub-theme' if report.level else 'Theme'}: {report.size} entities, {len(report.chunks)} passages, "
           f"{len(report.documents)} documents, seen {human_date(report.first_seen) or '?'} to "
           f"{human_date(report.last_seen) or '?'}")
if report.key_phrases:
    st.markdown("**Key phrases:** " + ui.md_text(", ".join(p for p, _ in report.key_phrases[:10])))
st.markdown("**Key entities:** " + ui.md_text(", ".join(f"{n} ({t})" for n, t, _ in report.key_entities)))
if report.relations:
    st.markdown("**Strongest relations**")
    for r in report.relations:
        st.markdown("- " + ui.md_text(f"{r['source']} -{r['relation']}-> {r['target']} (weight {r['weight']}; "
                               f"chunks {', '.join(r['chunks'])})"))
st.markdown("**Representative sentences**")
for point in report.points:
    st.markdown("- " + ui.md_text(f"{point.text} [{point.chunk_id}; {point.document}]"))
ui_widgets.citation_picker(ws, [p.chunk_id for p in report.points] + [c for r in report.relations for c in r["chunks"]],
                   key="communities.open", documents={p.chunk_id: p.document for p in report.points})
st.iframe(ui.community_html(ws, report.members), height=540)
