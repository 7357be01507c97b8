"""Canonicalization: which names were merged into one entity, and how to change that (every change undoable)."""

import streamlit as st

import ui
import ui_widgets
from workbench.context_graph.canon import form_reasons
from workbench.context_graph.merge_suggestions import page_of
from workbench.text.safe_text import printable
from workbench.views.merges import log_sentence, merge_log_frame, merge_preview, merges_frame, undoable

SUGGESTIONS_PER_PAGE = 12

ui.keep_widget_state()
st.title("Canonicalization")
st.caption("Different ways of writing one thing (\"Auth Service\", \"auth-service\", \"AuthService\") become one "
           "entity. Check the merges, accept or reject suggestions, add an alias or split a form out: the graph "
           "follows at once, and every change is in the log below, where it can be undone.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

st.subheader("Merges")
search = st.text_input("Search names", key=ui.kept("canon", "search", ""), placeholder="e.g. auth")
merges = ws.merges()
canonicalizer = ws.canonicalizer()
reasons = {merge.key: form_reasons(merge, canonicalizer) for merge in merges}
first_chunks = [form.chunk_ids[0] for merge in merges for form in merge.surface_forms if form.chunk_ids]
chunk_text = {chunk.id: chunk.text for chunk in ws.chunks(first_chunks)}
table = merges_frame(merges, lambda chunk_id: chunk_text.get(chunk_id, ""), search, reasons)
if table.empty:
    st.write("No merge matches." if search else "No names have been merged yet.")
else:
    st.dataframe(table, hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
    forms = {f"{row['surface form']}  (in {row['canonical']})": row["chunks"].split(", ")
             for row in table.to_dict("records") if row["chunks"]}
    shown_form = st.selectbox("Every chunk where a form occurs", list(forms), index=None,
                              placeholder="Choose a surface form", key="canon.form_chunks")
    if shown_form:
        chunks = ws.chunks(forms[shown_form])
        st.dataframe([{"chunk": c.id, "document": printable(c.document_id), "text": printable(c.text, keep_newlines=True)}
                      for c in chunks], hide_index=True, width="stretch")
        ui_widgets.citation_picker(ws, [c.id for c in chunks], key="canon.open", documents={c.id: c.document_id for c in chunks})

st.subheader("Suggested merges")
st.caption("Ranked by evidence: a note or glossary entry that declares two names one, then a Chinese name whose "
           "translation is an English one (stronger when both link to the same entities), then names alike in "
           "meaning, then names alike in spelling only. Numbers, years and dates are never suggested.")
found = ui.suggestions(ws)
if not found:
    st.write("No near-duplicate names left to review.")
else:
    pages = page_of(found, 1, SUGGESTIONS_PER_PAGE).pages
    number = st.number_input("Page of suggestions", 1, pages, key=ui.kept("canon", "suggestion_page", 1)) \
        if pages > 1 else 1
    shown = page_of(found, min(int(number), pages), SUGGESTIONS_PER_PAGE)
    st.caption(f"{shown.total} suggestions in {pages} page{'s' if pages != 1 else ''}: showing "
               f"{shown.first}-{shown.first + len(shown.suggestions) - 1}")
    for i, suggestion in enumerate(shown.suggestions, shown.first - 1):
        text, accept, reject = st.columns([6, 1, 1], vertical_alignment="center")
        text.markdown(f"{i + 1}. **{ui.md_text(suggestion.a)}  ↔  {ui.md_text(suggestion.b)}** ({suggestion.score:.2f})  \n"
                      f"{ui.md_text(suggestion.reason)}")
        if accept.button("Accept", key=f"canon.accept.{i}"):
            canonical, alias = ui.canonical_first(ws, suggestion.a, suggestion.b)
            if ui.run_write(ws, ws.corrections.accept_suggestion, alias, canonical):
                st.rerun()
        if reject.button("Reject", key=f"canon.reject.{i}"):
            if ui.run_write(ws, ws.corrections.reject_suggestion, suggestion.a, suggestion.b):
                st.rerun()

# A merge's effect before it is made: the edges of the less mentioned name move to the other.
# The box holds the pair itself, not its place in the list: accepting a suggestion shifts the list.
if found:
    pairs = [(suggestion.a, suggestion.b) for suggestion in found[:50]]
    if st.session_state.get("canon.preview") not in (None, *pairs):
        st.session_state["canon.preview"] = None  # the pair was accepted or rejected meanwhile: nothing chosen
    pair = st.selectbox("Preview the edges a merge would move", pairs, index=None,
                        format_func=lambda p: printable(f"{p[0]}  ↔  {p[1]}"), key="canon.preview",
                        placeholder="Choose a suggestion")
    if pair is not None:
        canonical, alias = ui.canonical_first(ws, *pair)
        moved = merge_preview(ws.graph, alias, canonical)
        st.caption(f"Merging {ui.md_text(alias)} into {ui.md_text(canonical)} moves {len(moved)} relation edges.")
        if not moved.empty:
            st.dataframe(moved, hide_index=True, width="stretch")

alias_column, split_column = st.columns(2)
with alias_column, st.form("canon.alias", clear_on_submit=True):
    st.markdown("**Add an alias**: treat one name as another")
    alias = st.text_input("Alias", placeholder="e.g. login service")
    canonical = st.text_input("Canonical name", placeholder="e.g. Auth Service")
    if st.form_submit_button("Add alias") and ui.run_write(ws, ws.corrections.add_alias, alias, canonical):
        st.rerun()
with split_column, st.form("canon.split"):
    st.markdown("**Split a form out**: give one surface form an entity of its own")
    split_forms = sorted({form.form for merge in merges for form in merge.surface_forms}, key=str.casefold)
    form = st.selectbox("Surface form", split_forms, index=None, placeholder="Choose a form", format_func=printable)
    if st.form_submit_button("Split") and form and ui.run_write(ws, ws.corrections.split, form):
        st.rerun()

st.subheader("Change log")
log = ws.corrections.merge_log()
if not log:
    st.write("No changes yet: every merge so far comes from the name rules and the settings.")
    st.stop()
st.dataframe(merge_log_frame(log), hide_index=True, width="stretch")
open_entries = undoable(log)
if open_entries:
    with st.form("canon.undo"):
        entry = st.selectbox("Undo a change", open_entries, index=None, placeholder="Choose a change",
                             format_func=lambda e: f"#{e['id']}: {log_sentence(e)}")
        if st.form_submit_button("Undo") and entry and ui.run_write(ws, ws.corrections.undo, entry["id"]):
            st.toast(f"Undid #{entry['id']}")
            st.rerun()
