"""Corpus: what the workspace holds, and how to add or remove documents."""

from pathlib import Path

import streamlit as st

import ui
from workbench.safe_text import printable
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
        else:
            ui.ingest(ws, [Path(folder.strip()).expanduser()])
            st.rerun()
with from_upload:
    uploads = st.file_uploader("Files to ingest", accept_multiple_files=True, key="corpus.uploads",
                               type=["txt", "md", "markdown", "json", "jsonl"])
    if st.button("Ingest uploaded files", key="corpus.ingest_uploads", disabled=not uploads):
        ui.ingest(ws, [ui.save_uploads(ws, uploads)])
        st.rerun()

st.subheader("Documents")
documents = ws.documents()
if documents:
    st.dataframe(documents_frame(documents), hide_index=True, width="stretch")
    doomed = st.selectbox("Remove a document", [d.id for d in documents], index=None, placeholder="Choose a document",
                          format_func=printable, key="corpus.doomed")
    if doomed:
        st.warning(f"Remove {ui.md_text(doomed)}? Its chunks, vectors and the edges only it states leave the "
                   "workspace; ingesting the file again brings them back.")
        confirm, cancel = st.columns([1, 6])
        if confirm.button("Remove", type="primary", key="corpus.remove") and ui.run_write(ws, ws.remove, doomed):
            st.session_state["corpus.last_report"] = None
            st.session_state.pop("corpus.doomed", None)
            st.toast(f"Removed {ui.md_text(doomed)}")
            st.rerun()
        if cancel.button("Cancel", key="corpus.cancel"):
            st.session_state.pop("corpus.doomed", None)
            st.rerun()
else:
    st.write("No documents yet.")
