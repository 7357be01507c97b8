"""Graph: the typed relation graph or the co-mention graph, filtered, with the evidence behind each edge."""

import streamlit as st

import ui
import ui_widgets
from workbench.text.safe_text import printable
from workbench.views.graph import COMENTION, RANKINGS, RELATIONS, GraphFilters
from workbench.views.tables import edge_chunks_frame, edges_at_frame

ui.keep_widget_state()
st.title("Graph")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()
graph = ws.graph
facts = ui.graph_facts_of(ws)
names = facts.names
URL = [ui.UrlField("view", "keep.graph.view", choices=(RELATIONS, COMENTION)),
       ui.UrlField("entity", ui.ENTITY, choices=names), ui.UrlField("steps", "keep.graph.hops", "int", bounds=(0, 4))]
ui.view_from_url("graph", URL)  # a reload or a pasted link shows the view it names

with st.sidebar:
    st.header("Graph filters")
    view = st.radio("Graph", [RELATIONS, COMENTION], key=ui.kept("graph", "view", RELATIONS),
                    format_func={COMENTION: "Co-mention (named together)", RELATIONS: "Typed relations"}.get)
    # every type the graph holds, none hard-coded
    chosen_types = st.multiselect("Entity types", facts.types, key=ui.kept("graph", "types", []), placeholder="All types")
    top_weight = ui.top_weight_of(ws, view)
    min_weight = 1
    if top_weight > 1:  # co-mention starts at 2: a pair named together once is mostly noise
        weight_key = ui.kept("graph", f"min_weight.{view}", 2 if view == COMENTION else 1)
        st.session_state[weight_key] = min(st.session_state[weight_key], top_weight)  # the data may have shrunk
        min_weight = st.slider("Minimum edge weight (chunks stating it)", 1, top_weight, key=weight_key)
    else:
        st.caption("Every edge in this view is stated by one chunk: no weight filter.")
    dates = list(facts.dates)
    time_range = None
    if len(dates) > 1:
        time_range = st.select_slider("Time range", dates, value=(dates[0], dates[-1]), key="graph.time")
        time_range = None if time_range == (dates[0], dates[-1]) else time_range
    chosen_relations = st.multiselect("Relations", facts.relations, key=ui.kept("graph", "relations", []),
                                      placeholder="All relations", disabled=view != RELATIONS)
    size_by = st.radio("Rank and size nodes by", RANKINGS, key=ui.kept("graph", "size_by", "degree"), horizontal=True)
    top_n = st.number_input("Most entities shown", 10, 5000, step=10, key=ui.kept("graph", "top_n", 150))
    show_chunks = st.toggle("Show passages (chunks) mentioning them", key=ui.kept("graph", "chunks", False))
    show_noise = st.toggle("Show values and titles", key=ui.kept("graph", "noise", False),
                           help="Entities that are numbers, durations (“90 days”), dates or the title of a document "
                                "are hidden unless this is on.")

choices = ui.entity_choices_of(facts, "graph.find")  # past 2,000 names: those matching typed text
center = st.selectbox("Find an entity: it is highlighted, centred and its neighbours listed",
                      choices, index=None,
                      format_func=lambda key: printable(names[key]),
                      placeholder="Type a name" if choices else "Type part of a name above first", key=ui.ENTITY)
hops = 0
if center is not None:
    hops = st.slider("Steps around the entity (0: the whole view)", 0, 4, key=ui.kept("graph", "hops", 2),
                     help="Draw only the entities this many edges from the one found; click a node in the drawing "
                          "to show its further neighbours.")
ui.view_to_url(URL)
filters = GraphFilters(types=tuple(chosen_types) or None, min_weight=min_weight, time_range=time_range,
                       relations=tuple(chosen_relations) or None if view == RELATIONS else None,
                       size_by=size_by, top_n=int(top_n), show_chunks=show_chunks, focus=center, hops=hops,
                       show_noise=show_noise)
drawn = ui.graph_view(ws, view, filters)
st.caption(f"{drawn.nodes} of {len(graph)} entities shown"
           + (f" ({drawn.folded} more one step further appear when a neighbour is clicked)" if drawn.folded else "")
           + f", {drawn.edges} edges drawn" + (f", with {drawn.chunks} chunks" if show_chunks else "")
           + ". Colours follow the entity type (legend above the graph). Edge width is the number of chunks stating the edge; co-mention edges have no arrow. Hover a node or "
             "an edge for its dates and chunks. Undated edges stay visible under a time filter.")
if drawn.note:
    st.info(drawn.note)
if center is not None and center not in drawn.keys:
    st.warning(f"{ui.md_text(names[center])} has no edge passing these filters, so it is not drawn.")
if drawn.nodes:
    st.iframe(drawn.html, height=680)
else:
    st.write("No entity passes these filters: widen them in the sidebar.")

st.subheader("Neighbours and evidence")
if center is None:
    st.write("Find an entity above to list its neighbours, with the relation, direction and weight of each edge.")
else:
    # Exactly the edges drawn at the entity (same view, same filters), not another walk of the graph.
    passing = list(drawn.focus_edges)
    if center in drawn.keys:
        left_out = drawn.focus_total - len(passing)
        st.caption(f"{len(passing)} edges drawn at {ui.md_text(names[center])}"
                   + (f"; {left_out} of its {drawn.focus_total} edges in this view left out by the sidebar filters."
                      if left_out else "."))
        st.dataframe(edges_at_frame(graph, center, passing), hide_index=True, width="stretch",
                     column_config=ui_widgets.COLUMN_HELP)
        chunk_ids = sorted({c for edge in passing for c in edge.chunk_ids})
        chunks = {chunk.id: chunk for chunk in ws.chunks(chunk_ids)}
        st.dataframe(edge_chunks_frame(graph, passing, chunks), hide_index=True, width="stretch",
                     column_config=ui_widgets.COLUMN_HELP)
        ui_widgets.citation_picker(ws, chunk_ids, key="graph.open", documents={c: chunks[c].document_id for c in chunks})
