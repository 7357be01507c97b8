"""Timeline: conversation episodes with their decisions, and one entity's dated facts in order."""

import streamlit as st

import ui
import ui_widgets
from workbench.context_graph.graph import EntityNotFound
from workbench.text.safe_text import printable
from workbench.corpus.timeline import timeline
from workbench.views.chunks import human_date
from workbench.views.episodes import EPISODES_A_PAGE, episode_page, find_episodes, page_count
from workbench.views.tables import timeline_frame

ui.keep_widget_state()
st.title("Timeline")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

st.subheader("Episodes")
st.caption(f"Each chat log is split into sessions where a pause passes {ws.settings.episodes.session_gap_minutes:g} "
           "minutes; each session lists who took part, what was discussed and the sentences that state a decision.")
episodes = ws.episodes()
shown = episodes
if not episodes:
    st.info("No conversation log (.jsonl chat) in the workspace, so no episodes.")
elif len(episodes) > EPISODES_A_PAGE:  # a chat archive's tens of thousands: found and paged
    found = find_episodes(episodes, st.text_input("Find sessions", key="timeline.episodes.find",
                                                  placeholder="a participant, an entity or words of a decision"))
    pages = page_count(len(found))
    if st.session_state.get("timeline.episodes.page", 1) > pages:  # a narrower search has fewer pages
        st.session_state["timeline.episodes.page"] = pages
    number = st.number_input("Page", min_value=1, max_value=pages, step=1, key="timeline.episodes.page")
    shown, _ = episode_page(found, int(number))
    st.caption(f"{len(found):,} of {len(episodes):,} sessions, oldest first: page {int(number):,} of {pages:,}, "
               f"{EPISODES_A_PAGE} a page.")
for episode in shown:
    with st.expander(printable(f"{episode.document}: {human_date(episode.start, True)} to {human_date(episode.end, True)}"),
                     expanded=True):
        st.markdown("**Participants:** " + ui.md_text(", ".join(f"{s} ({n})" for s, n in episode.participants)))
        st.markdown("**Discussed:** " + ui.md_text(", ".join(episode.entities) or "(no entity)"))
        if episode.decisions:
            st.markdown("**Decisions**")
            for d in episode.decisions:
                st.markdown("- " + ui.md_text(f"{human_date(d.time, True)}: {d.text} [{d.chunk_id}]"))
        else:
            st.caption("No sentence states a decision.")

ui_widgets.citation_picker(ws, [d.chunk_id for e in shown for d in e.decisions], key="timeline.open_decision",
                   label="Open a decision's chunk", documents={d.chunk_id: e.document for e in shown for d in e.decisions})

st.subheader("An entity over time")
facts = ui.graph_facts_of(ws)  # names read once per version, from a loaded graph's columns
URL = [ui.UrlField("entity", ui.ENTITY, choices=facts.names)]
ui.view_from_url("timeline", URL)  # a reload or a pasted link shows the entity it names
names, choices = facts.names, ui.entity_choices_of(facts, "timeline.find")  # past 2,000 names: those matching typed text
center = st.selectbox("Entity", choices, index=None, format_func=lambda key: printable(names[key]),
                      placeholder="Type a name" if choices else "Type part of a name above first", key=ui.ENTITY)
ui.view_to_url(URL)
if center is not None:
    try:
        found = timeline(ws, names[center])
        name, entries = found.entity, found.entries
    except EntityNotFound as exc:
        st.warning(ui.md_text(exc))
    else:
        st.caption(f"{len(entries)} dated mentions, relations and decisions about {ui.md_text(name)}, oldest first.")
        st.dataframe(timeline_frame(entries), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
        ui_widgets.citation_picker(ws, [e.chunk_id for e in entries], key="timeline.open",
                           documents={e.chunk_id: e.document for e in entries})
