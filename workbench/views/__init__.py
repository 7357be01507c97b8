"""Views: what the pages and the notebooks show, built from the core's results (no streamlit).

One module per concept, each turning core objects into tables (:class:`pandas.DataFrame`),
text or HTML, with names and texts from documents passed through
:func:`~workbench.text.safe_text.printable`:

- :mod:`~workbench.views.graph`: filtered views of the context graph (what is drawn, what is hidden
  and why); :mod:`~workbench.views.graph_html` draws one as offline pyvis HTML, colours per entity
  type and their legend;
- :mod:`~workbench.views.tables`: documents, an entity's neighbours and the chunks behind its
  edges, communities, timelines;
- :mod:`~workbench.views.merges`: canonicalization, the merges, suggestions and the change log;
- :mod:`~workbench.views.retrieval`: hits with their reasons, strategies side by side and their
  overlap, a graph context's seeds, walked entities, cited triples, paths and impacts;
- :mod:`~workbench.views.chunks`: one cited chunk as the chunk viewer shows it (text with the cited
  words marked, document, date, neighbours, the edges it states), human dates;
- :mod:`~workbench.views.compare`: what Compare says before the hits (the structural answer,
  the documents each mode missed, superseded notes, a hit's reason in a few words);
- :mod:`~workbench.views.notebooks`: what only the notebooks need (workspace folders, inline HTML,
  benchmark subsets and charts).

The layer sits above the core (which never imports it) and below the surfaces: ``app.py``,
``pages/``, ``ui.py`` and the notebooks.
"""
