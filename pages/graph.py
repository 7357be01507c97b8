"""Graph: the co-mention graph and the typed relation graph, filtered, with the evidence behind each edge."""

import streamlit as st

import ui
from workbench.graph import EntityNotFound
from workbench.visual import COMENTION, RELATIONS, GraphFilters, edge_chunks_frame, graph_dates, neighbours_frame

ui.keep_widget_state()
st.title("Graph")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()
graph = ws.graph

with st.sidebar:
    st.header("Graph filters")
    view = st.radio("Graph", [COMENTION, RELATIONS], key=ui.kept("graph", "view", RELATIONS),
                    format_func={COMENTION: "Co-mention (named together)", RELATIONS: "Typed relations"}.get)
    types = sorted({entity.type for entity in graph.entities()})
    chosen_types = st.multiselect("Entity types", types, key=ui.kept("graph", "types", []),
                                  placeholder="All types")
    min_weight = st.slider("Minimum edge weight (chunks stating it)", 1, 10, key=ui.kept("graph", "min_weight", 1))
    dates = graph_dates(graph)
    time_range = None
    if len(dates) > 1:
        time_range = st.select_slider("Time range", dates, value=(dates[0], dates[-1]), key="graph.time")
        time_range = None if time_range == (dates[0], dates[-1]) else time_range
    relations = sorted({edge.relation for edge in graph.edges()})
    chosen_relations = st.multiselect("Relations", relations, key=ui.kept("graph", "relations", []),
                                      placeholder="All relations", disabled=view != RELATIONS)
    size_by = st.radio("Node size by", ["degree", "mentions"], key=ui.kept("graph", "size_by", "degree"),
                       horizontal=True)
    top_n = st.number_input("Most nodes shown", 10, 2000, step=10, key=ui.kept("graph", "top_n", 150))

filters = GraphFilters(types=tuple(chosen_types) or None, min_weight=min_weight, time_range=time_range,
                       relations=tuple(chosen_relations) or None if view == RELATIONS else None,
                       size_by=size_by, top_n=int(top_n))
html, note, shown_nodes, shown_edges, shown_keys = ui.graph_view_html(ws, view, filters)
st.caption(f"{shown_nodes} entities and {shown_edges} edges shown. Edge width is the number of chunks stating the "
           "edge; hover a node or an edge for details. Undated edges stay visible under a time filter.")
if note:
    st.info(note)
if shown_nodes:
    st.iframe(html, height=640)
else:
    st.write("No entity passes these filters: widen them in the sidebar.")

st.subheader("Neighbours and evidence")
names = {key: graph.name(key) for key in shown_keys} or {e.key: e.name for e in graph.entities()}
center = st.selectbox("Pick an entity", sorted(names, key=lambda k: names[k].casefold()), index=None,
                      format_func=names.get, placeholder="Choose an entity", key="graph.center")
if center is not None:
    try:
        around = graph.neighbors(center, hops=1, direction="both", include_comention=view == COMENTION)
    except EntityNotFound as exc:
        st.warning(str(exc))
    else:
        left, right = st.columns([1, 3])
        left.dataframe(neighbours_frame(around), hide_index=True, width="stretch")
        chunk_ids = sorted({c for edge in around.edges for c in edge.chunk_ids})
        chunks = {chunk.id: chunk for chunk in ws.chunks(chunk_ids)}
        right.dataframe(edge_chunks_frame(graph, around.edges, chunks), hide_index=True, width="stretch")
