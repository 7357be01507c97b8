"""Communities: the themes of the corpus, each with its extractive report and drawn."""

import streamlit as st

import ui
from workbench.safe_text import printable
from workbench.views.chunks import human_date
from workbench.views.tables import communities_frame

ui.keep_widget_state()
st.title("Communities")
st.caption("Groups of entities that the graph ties together (Louvain on relation and co-mention edges). Each report "
           "is extractive: its title names the most central entities, and every point is a sentence quoted from a "
           "cited chunk. The global retrieval mode answers corpus-wide questions from these reports.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()
reports = ws.communities()
if not reports:
    st.info(f"No community of {ws.settings.communities.min_size} or more entities: the graph is too sparse.")
    st.stop()
st.dataframe(communities_frame(reports), hide_index=True, width="stretch", column_config=ui.COLUMN_HELP)
titles = {r.id: f"{printable(r.title)} ({r.size} entities)" for r in reports}
chosen = st.selectbox("Community", list(titles), format_func=titles.get, key=ui.kept("communities", "id", reports[0].id))
report = next((r for r in reports if r.id == chosen), reports[0])

st.subheader(ui.md_text(report.title))
st.caption(f"{report.size} entities, seen {human_date(report.first_seen) or '?'} to {human_date(report.last_seen) or '?'}")
st.markdown("**Key entities:** " + ui.md_text(", ".join(f"{n} ({t})" for n, t, _ in report.key_entities)))
if report.relations:
    st.markdown("**Strongest relations**")
    for r in report.relations:
        st.markdown("- " + ui.md_text(f"{r['source']} -{r['relation']}-> {r['target']} (weight {r['weight']}; "
                               f"chunks {', '.join(r['chunks'])})"))
st.markdown("**Representative sentences**")
for point in report.points:
    st.markdown("- " + ui.md_text(f"{point.text} [{point.chunk_id}; {point.document}]"))
ui.citation_picker(ws, [p.chunk_id for p in report.points] + [c for r in report.relations for c in r["chunks"]],
                   key="communities.open", documents={p.chunk_id: p.document for p in report.points})
st.iframe(ui.community_html(ws, report.members), height=540)
