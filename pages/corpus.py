"""Corpus: what the workspace holds, and how to add or remove documents."""

import streamlit as st

import ui
import ui_widgets
from workbench.text.safe_text import printable
from workbench.views.tables import documents_frame

ui.keep_widget_state()
st.title("Corpus")
st.caption("Load documents into the workspace: they are chunked, their entities and relations extracted into "
           "the context graph, and their chunks embedded for vector search.")
ws = ui.workspace()
stats = ui.workspace_metrics(ws)

if stats["documents"] == 0:
    st.info("The workspace is empty. Start with the bundled sample corpus (a small company's architecture notes, "
            "incidents, runbooks and chat logs), or load your own files below.")
    if st.button("Ingest the sample corpus", type="primary", key="corpus.ingest_sample"):
        ui.ingest(ws, [ui.SAMPLE_CORPUS])
        st.rerun()

ui.show_last_ingest()

st.subheader("Add documents")
from_folder, from_upload = st.tabs(["From a folder", "Upload files"])
with from_folder:
    folder = st.text_input("Folder or file on this machine", key=ui.kept("corpus", "folder", str(ui.SAMPLE_CORPUS)),
                           help="Text (.txt), Markdown with front matter (.md), chat logs and records (.jsonl, .json).")
    if st.button("Ingest this folder", key="corpus.ingest_folder"):
        if not folder.strip():
            st.warning("Type a folder or file path first.")
        elif (path := ui.typed_path(ws, folder, report="corpus.last_report")) is not None:
            ui.ingest(ws, [path])
            st.rerun()
with from_upload:
    kinds = ["txt", "md", "markdown", "json", "jsonl"]
    again = ("A file uploaded again, or one holding the text of a document already here, is reported unchanged, "
             "not added twice.")
    files = st.file_uploader("Files to ingest", accept_multiple_files=True, key="corpus.uploads", type=kinds,
                             help=again)
    folder_files = st.file_uploader("Or a whole folder (its subfolders kept in the document ids)",
                                    accept_multiple_files="directory", key="corpus.upload_folder", type=kinds,
                                    help=again)
    uploads = [*(files or []), *(folder_files or [])]
    if st.button("Ingest uploaded files", key="corpus.ingest_uploads", disabled=not uploads):
        ui.upload_and_ingest(ws, uploads)
        st.rerun()

# A note that says in its text that it replaces an earlier one: a person confirms it here.
superseding = ws.store.candidate_triples("SUPERSEDES")
if superseding:
    st.subheader("Notes that say they replace another")
    st.caption("Read from the notes' own words (“this replaces the November 2024 schedule”). Accept one and the "
               "older note is marked superseded on the Compare page, its hits shown after the newer note's.")
    for i, triple in enumerate(superseding[:20]):
        said, accept = st.columns([6, 1], vertical_alignment="center")
        said.markdown(f"**{ui.md_text(triple.subject)}** replaces **{ui.md_text(triple.object)}** "
                      f"({triple.confidence:.1f}; chunk {ui.md_text(triple.chunk_id)})")
        if accept.button("Accept", key=f"corpus.supersedes.{i}") and ui.run_write(
                ws, ws.corrections.accept_candidate, triple.subject, triple.relation, triple.object):
            st.rerun()
    if len(superseding) > 20:
        st.caption(f"{len(superseding) - 20} more: `python -m workbench candidates` lists them all.")

# Keep a folder live: `watch` run by this app, one batch of changes a write (workbench/workspace/watch.py).
st.subheader("Keep a folder live")
watching = ui.folder_watch(ws)
if watching is not None and (watching.running or watching.error):
    if watching.error:
        st.error(ui.md_text(watching.status()))
    else:
        st.caption(ui.md_text(watching.status()))
    st.button("Stop watching", key="corpus.watch_stop", on_click=ui.stop_folder_watch, args=(ws,))
else:
    live = st.text_input("Folder to keep in step", key=ui.kept("corpus", "watch_folder", ""),
                         help="Added, edited, deleted and renamed files are written as they change, a batch at a "
                              "time, while this app runs (as `python -m workbench watch FOLDER` does).")
    if st.button("Watch this folder", key="corpus.watch_start") and live.strip() \
            and (path := ui.typed_path(ws, live)) is not None:
        ui.start_folder_watch(ws, path).ready.wait(timeout=600)  # caught up before the page shows it
        st.rerun()

st.subheader("Documents")
documents = ws.documents()
if documents:
    st.dataframe(documents_frame(documents), hide_index=True, width="stretch", column_config=ui_widgets.COLUMN_HELP)
    ids = [d.id for d in documents]
    titles = {d.id: d.title for d in documents}
    # Removed meanwhile (another session): no longer chosen.
    st.session_state["corpus.doomed"] = [d for d in st.session_state.get("corpus.doomed") or [] if d in titles]
    doomed = st.multiselect("Remove documents", ids, placeholder="Choose one or more documents", key="corpus.doomed",
                            format_func=lambda d: printable(f"{d} · {titles[d]}" if titles[d] else d))
    if doomed:
        named = ui.md_text(doomed[0]) if len(doomed) == 1 else f"these {len(doomed)} documents"
        st.warning(f"Remove {named}? Their chunks, vectors and the edges only they state leave the "
                   "workspace; ingesting the files again brings them back.")
        confirm, cancel = st.columns([1, 6])
        # Callbacks run before the next script run, so the box is cleared in the browser too
        # (popping its key only hid the prompt until the box sent its old value back).
        confirm.button("Remove", type="primary", key="corpus.remove", on_click=ui.remove_documents,
                       args=(ws, tuple(doomed)))
        cancel.button("Cancel", key="corpus.cancel", on_click=ui.clear_choice, args=("corpus.doomed", []))
else:
    st.write("No documents yet.")
