"""The Context Graph Workbench in the browser: the navigation, and the warm-up once a page has run
(run ``streamlit run app.py``)."""

import streamlit as st

import ui

st.set_page_config(page_title="Context Graph Workbench", layout="wide")

PAGES = [
    st.Page("pages/corpus.py", title="Corpus", default=True),
    st.Page("pages/canonicalization.py", title="Canonicalization"),
    st.Page("pages/graph.py", title="Graph"),
    st.Page("pages/communities.py", title="Communities"),
    st.Page("pages/timeline.py", title="Timeline"),
    st.Page("pages/compare.py", title="Compare"),
    st.Page("pages/evaluate.py", title="Evaluate"),
]

st.navigation(PAGES).run()
ui.warm_after_page()  # not before: the warm-up would hold the interpreter while the page runs
