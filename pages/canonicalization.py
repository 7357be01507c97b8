"""Canonicalization: which names were merged into one entity, and how to change that."""

import streamlit as st

import ui
from workbench.visual import merge_log_frame, merges_frame

ui.keep_widget_state()
st.title("Canonicalization")
st.caption("Different ways of writing one thing (\"Auth Service\", \"auth-service\", \"AuthService\") become one "
           "entity. Check the merges, accept or reject suggestions, add an alias or split a form out: the graph "
           "follows at once.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

st.subheader("Merges")
search = st.text_input("Search names", key=ui.kept("canon", "search", ""), placeholder="e.g. auth")
merges = ws.merges()
first_chunks = [form.chunk_ids[0] for merge in merges for form in merge.surface_forms if form.chunk_ids]
chunk_text = {chunk.id: chunk.text for chunk in ws.chunks(first_chunks)}
table = merges_frame(merges, lambda chunk_id: chunk_text.get(chunk_id, ""), search)
if table.empty:
    st.write("No merge matches." if search else "No names have been merged yet.")
else:
    st.dataframe(table, hide_index=True, width="stretch")

st.subheader("Suggested merges")
found = ui.suggestions(ws)
if not found:
    st.write("No near-duplicate names left to review.")
for i, suggestion in enumerate(found[:12]):
    text, accept, reject = st.columns([6, 1, 1], vertical_alignment="center")
    text.text(f"{suggestion.a}  ↔  {suggestion.b}   ({suggestion.score:.2f}, {suggestion.reason})")
    if accept.button("Accept", key=f"canon.accept.{i}"):
        canonical, alias = ui.canonical_first(ws, suggestion.a, suggestion.b)
        if ui.run_write(ws, ws.add_alias, alias, canonical):
            st.rerun()
    if reject.button("Reject", key=f"canon.reject.{i}"):
        if ui.run_write(ws, ws.reject_suggestion, suggestion.a, suggestion.b):
            st.rerun()

alias_column, split_column = st.columns(2)
with alias_column, st.form("canon.alias", clear_on_submit=True):
    st.markdown("**Add an alias**: treat one name as another")
    alias = st.text_input("Alias", placeholder="e.g. login service")
    canonical = st.text_input("Canonical name", placeholder="e.g. Auth Service")
    if st.form_submit_button("Add alias") and ui.run_write(ws, ws.add_alias, alias, canonical):
        st.rerun()
with split_column, st.form("canon.split"):
    st.markdown("**Split a form out**: give one surface form an entity of its own")
    forms = sorted({form.form for merge in merges for form in merge.surface_forms}, key=str.casefold)
    form = st.selectbox("Surface form", forms, index=None, placeholder="Choose a form")
    if st.form_submit_button("Split") and form and ui.run_write(ws, ws.split, form):
        st.rerun()

user_aliases = ws.store.aliases()
if user_aliases:
    with st.form("canon.unalias"):
        undo = st.selectbox("Undo an alias you added", sorted(user_aliases), index=None, placeholder="Choose an alias")
        if st.form_submit_button("Remove alias") and undo and ui.run_write(ws, ws.remove_alias, undo):
            st.rerun()

st.subheader("Merge log")
log = ws.merge_log()
if log:
    st.dataframe(merge_log_frame(log), hide_index=True, width="stretch")
else:
    st.write("No changes yet: every merge so far comes from the name rules and the settings.")
