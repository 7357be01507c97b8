"""The live app driven in chromium as a person would: ingest, explore, compare, hostile text, two sessions."""

from __future__ import annotations

import re

HOSTILE = "<img src=x onerror=alert(1)>"
VIEWPORT = {"width": 1440, "height": 1000}
LONG = 240_000  # ms: the first ingest embeds the whole sample corpus on two cores


def new_page(browser, dialogs: list):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return page


def open_page(page, title: str, expect: str):
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    page.get_by_text(expect).first.wait_for(timeout=LONG)
    wait_idle(page)


def wait_idle(page):
    """Until the script run of the page finished (the 'Running...' status is gone)."""
    page.wait_for_timeout(300)  # let a triggered rerun start
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
        " return app && !['running', 'initial'].includes(app.getAttribute('data-test-script-state')); }",
        timeout=LONG)
    page.wait_for_timeout(300)


def assert_no_exception(page):
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()


def metric(page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]', has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def graph_frame(page):
    handle = page.locator("iframe").first.element_handle(timeout=LONG)
    return handle.content_frame()


def assert_canvas_draws(page):
    frame = graph_frame(page)
    frame.wait_for_function(
        "() => { const c = document.querySelector('canvas'); if (!c || !c.width || !c.height) return false;"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true; return false; }",
        timeout=30_000)
    box = frame.locator("canvas").first.bounding_box()
    assert box["width"] > 100 and box["height"] > 100


def hover_node(page, label_part: str) -> str:
    """Move the mouse onto the node whose label contains ``label_part``; returns the tooltip text."""
    frame = graph_frame(page)
    frame.wait_for_function("() => typeof network !== 'undefined' && network !== null", timeout=30_000)
    spot = frame.evaluate(
        """(part) => { network.setOptions({physics: false});
           const node = nodes.get().find(n => n.label.includes(part)); if (!node) return null;
           network.focus(node.id, {scale: 1.5});
           const p = network.canvasToDOM(network.getPositions([node.id])[node.id]);
           return {x: p.x, y: p.y}; }""", label_part)
    assert spot is not None, f"no node labelled with {label_part!r}"
    box = frame.locator("canvas").first.bounding_box()  # the legend sits above the canvas
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    tooltip = frame.locator(".vis-tooltip")
    tooltip.wait_for(state="visible", timeout=10_000)
    return tooltip.inner_text()


def graph_labels(page) -> list[str]:
    """The labels of the nodes the Graph page's canvas holds."""
    frame = graph_frame(page)
    frame.wait_for_function("() => typeof nodes !== 'undefined' && nodes !== null", timeout=30_000)
    return frame.evaluate("() => nodes.get().map(n => n.label)")


def choose(page, label: str, option: str):
    """Pick ``option`` in the Streamlit selectbox labelled ``label``, as a person types it."""
    box = page.get_by_role("combobox", name=label).first
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option).first.click()
    page.wait_for_timeout(200)


def screenshot(page, name: str, folder):
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_a_person_ingests_explores_compares_and_stays_safe(live_app, browser, screenshot_dir, tmp_path):
    from playwright.sync_api import expect

    dialogs: list[str] = []
    page = new_page(browser, dialogs)
    page.goto(live_app)
    page.get_by_text("The workspace is empty").first.wait_for(timeout=LONG)

    # Ingest the sample corpus through the UI, as the empty workspace suggests.
    page.get_by_role("button", name="Ingest the sample corpus").click()
    page.get_by_text("Ingested in").first.wait_for(timeout=LONG)
    wait_idle(page)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=LONG)
    assert metric(page, "Documents") == "31" and int(metric(page, "Edges")) > 0
    assert_no_exception(page)
    screenshot(page, "corpus", screenshot_dir)

    # Uploads: the same two files uploaded again, after a reload, are unchanged, not new documents.
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    for name, text in (("planning.md", "---\ntitle: Planning notes\n---\nThe billing service sends invoices.\n"),
                       ("rota.md", "---\ntitle: On-call rota\n---\nThe platform team is on call for Kafka.\n")):
        (uploads / name).write_text(text, encoding="utf-8")
    for attempt, expected in enumerate(("2 added", "0 added, 0 updated, 2 unchanged")):
        if attempt:
            page.reload()
            page.get_by_text("Add documents").first.wait_for(timeout=LONG)
            wait_idle(page)
        page.get_by_role("tab", name="Upload files").click()
        page.locator('[data-testid="stFileUploader"]', has_text="Files to ingest").locator(
            'input[type="file"]').set_input_files([str(uploads / "planning.md"), str(uploads / "rota.md")])
        page.get_by_text("rota.md").first.wait_for(timeout=LONG)
        wait_idle(page)
        page.get_by_role("button", name="Ingest uploaded files").click()
        page.get_by_text(expected).first.wait_for(timeout=LONG)
        wait_idle(page)
        assert metric(page, "Documents") == "33"
    assert page.get_by_text("Planning notes").count() >= 1  # the title, in the documents table
    assert_no_exception(page)

    # Canonicalization: merge the Chinese twin, split a form out, undo the split; the graph follows.
    open_page(page, "Canonicalization", "Suggested merges")
    assert page.get_by_text("Auth Service  ↔  认证服务").count() == 1
    screenshot(page, "canonicalization", screenshot_dir)
    open_page(page, "Graph", "Neighbours and evidence")
    assert "认证服务" in graph_labels(page) and "AuthService" not in graph_labels(page)
    open_page(page, "Canonicalization", "Suggested merges")
    preview = "Preview the edges a merge would move"
    choose(page, preview, "登录流程")
    wait_idle(page)
    previewed = page.get_by_role("combobox", name=preview).first.input_value()
    assert "登录流程" in previewed
    row = page.locator('[data-testid="stHorizontalBlock"]', has_text="Auth Service  ↔  认证服务").first
    row.get_by_role("button", name="Accept").click()
    page.get_by_text("Accepted a suggestion").first.wait_for(state="attached", timeout=LONG)  # a data-grid cell
    wait_idle(page)
    # The preview still shows the pair chosen, and its sentence names that pair, not another.
    assert page.get_by_role("combobox", name=preview).first.input_value() == previewed
    merging = page.get_by_text(re.compile(r"^Merging .* moves \d+ relation edges")).first.inner_text()
    assert "登录流程" in merging and "login flow" in merging.casefold()
    choose(page, "Surface form", "AuthService")
    page.get_by_role("button", name="Split").click()
    page.get_by_text("Split “AuthService” out").first.wait_for(state="attached", timeout=LONG)  # a data-grid cell
    wait_idle(page)
    open_page(page, "Graph", "Neighbours and evidence")
    labels = graph_labels(page)
    assert "认证服务" not in labels and "AuthService" in labels and "Auth Service" in labels
    open_page(page, "Canonicalization", "Change log")
    log_text = page.locator('[data-testid="stDataFrame"]').last.text_content()
    assert not re.search(r"\b1\d{9}\.\d+", log_text)  # times are dates, not epochs
    choose(page, "Undo a change", "#2: Split “AuthService” out into an entity of its own")
    page.get_by_role("button", name="Undo").click()
    page.get_by_text("Undid #2").first.wait_for(state="attached", timeout=LONG)  # a data-grid cell
    wait_idle(page)
    assert_no_exception(page)
    screenshot(page, "canonicalization-undo", screenshot_dir)
    open_page(page, "Graph", "Neighbours and evidence")
    labels = graph_labels(page)
    assert "AuthService" not in labels and "Auth Service" in labels and "认证服务" not in labels
    assert_canvas_draws(page)
    choose(page, "Find an entity: it is highlighted, centred and its neighbours listed", "Redis")
    wait_idle(page)
    page.get_by_text("backed_by").first.wait_for(state="attached", timeout=LONG)  # a data-grid cell
    assert_canvas_draws(page)
    page.wait_for_timeout(3000)  # let the view settle on the picked entity
    assert_no_exception(page)
    screenshot(page, "graph", screenshot_dir)
    assert "entity=redis" in page.url
    page.reload()  # a reload (a new session) shows the same view: the address holds it
    page.get_by_text("Neighbours and evidence").first.wait_for(timeout=LONG)
    wait_idle(page)
    finder = page.locator('[data-testid="stSelectbox"]', has_text="Find an entity")
    expect(finder.get_by_role("combobox")).to_have_value("Redis", timeout=30_000)

    # Compare: three strategies side by side, the overlap table and graphrag's walk.
    open_page(page, "Compare", "Assembled context: graphrag")
    shown = page.locator('[data-testid="stText"]').all_inner_texts()
    joined = "\n".join(shown).casefold()
    assert "login flow" in joined and "auth service" in joined and "token cache" in joined
    headings = page.locator("h3").all_inner_texts()
    assert headings[:3] == ["graphrag", "hybrid", "paths"] and "Rank overlap" in headings
    assert "If Redis fails (paths)" in headings and "What graphrag walked" in headings
    assert page.get_by_text("What breaks if Redis fails?").count() >= 1  # the answer first
    assert page.get_by_text("Still standing:").count() == 1
    assert_no_exception(page)
    screenshot(page, "compare", screenshot_dir)

    # A citation opens in the chunk viewer: its text, document and the edges it states.
    page.get_by_role("button", name="Open chunk", exact=True).first.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Edges it states").wait_for(timeout=LONG)
    dialog.locator("mark").first.wait_for(timeout=30_000)  # the cited words, marked in the chunk's text
    assert re.search(r"id [0-9a-f]{16}", dialog.inner_text())
    screenshot(page, "chunk-viewer", screenshot_dir)
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=30_000)
    wait_idle(page)

    # As of a day in July 2024, the 2023 session-store decision is superseded by the 2024 one.
    question = page.get_by_role("textbox", name="Question")
    question.fill("Where are web sessions stored?")
    question.press("Enter")
    wait_idle(page)
    as_of = page.locator('[data-testid="stDateInput"]', has_text="As of").locator("input").first
    as_of.fill("2024-07-15")
    as_of.press("Enter")
    page.keyboard.press("Escape")
    wait_idle(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    page.get_by_text("superseded by").first.wait_for(timeout=LONG)
    wait_idle(page)
    badge = page.get_by_text("superseded by").first.inner_text()
    assert "2024-06-session-store-redis.md" in badge and "10 Jun 2024" in badge
    assert page.get_by_text("20 Nov 2023").count() >= 1  # the older decision's date on its card
    assert_no_exception(page)
    screenshot(page, "compare-as-of", screenshot_dir)
    link = page.url
    assert "as_of=2024-07-15" in link and "q=Where" in link
    page.reload()  # the same question, strategies and day, answered again
    page.get_by_text("superseded by").first.wait_for(timeout=LONG)
    wait_idle(page)
    question = page.get_by_role("textbox", name="Question")
    # A text box shows the value it was given a moment after the run that gave it (up to seconds here).
    expect(question).to_have_value("Where are web sessions stored?", timeout=30_000)
    expect(page.locator('[data-testid="stDateInput"]', has_text="As of").locator("input").first).to_have_value(
        "2024-07-15", timeout=30_000)
    question.fill("If Redis goes down, what breaks?")
    question.press("Enter")
    wait_idle(page)
    as_of_box = page.locator('[data-testid="stDateInput"]', has_text="As of")
    as_of_box.locator('[data-testid="stDateInputClearButton"]').click()
    wait_idle(page)
    assert as_of_box.locator("input").first.input_value() == ""
    page.get_by_role("button", name="Compare", exact=True).click()
    wait_idle(page)

    # Communities and Timeline, for the screenshots of every page.
    open_page(page, "Communities", "Representative sentences")
    assert_no_exception(page)
    screenshot(page, "communities", screenshot_dir)
    open_page(page, "Timeline", "An entity over time")
    assert_no_exception(page)
    screenshot(page, "timeline", screenshot_dir)

    # Evaluate: a run, a second run, and the comparison of the two saved runs.
    open_page(page, "Evaluate", "press Run")
    page.get_by_role("button", name="Run the evaluation").click()
    page.get_by_text("Download cases (CSV)").first.wait_for(timeout=LONG)
    wait_idle(page)
    page.locator('[data-testid="stPlotlyChart"]').nth(2).wait_for(timeout=60_000)  # drawn a moment after the run
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 3
    assert page.get_by_text("Run the evaluation again").count() == 1
    # The run's HTML report opens offline in chromium, charts drawn, with the page's numbers.
    with page.expect_download(timeout=LONG) as download:
        page.get_by_role("button", name="Download report (HTML, opens offline)").click()
    report = tmp_path / "report.html"
    download.value.save_as(report)
    offline = browser.new_context(viewport=VIEWPORT, offline=True).new_page()
    offline.goto(report.as_uri())
    offline.locator(".plotly .main-svg").first.wait_for(timeout=30_000)
    assert offline.locator(".plotly-graph-div").count() == 3
    summary_report = offline.locator("table").first.inner_text()
    assert "direct" in summary_report and "+0.00 [0.00, 0.00]" in summary_report
    screenshot(offline, "evaluate-report", screenshot_dir)
    offline.context.close()
    assert "run=" in page.url  # the run shown is in the address: a reload or a link opens it again
    page.get_by_role("button", name="Run the evaluation").click()
    page.get_by_text("Download the comparison (CSV)").first.wait_for(timeout=LONG)
    wait_idle(page)
    assert page.get_by_text("At the pace of the runs saved here").count() == 1
    assert_no_exception(page)
    screenshot(page, "evaluate", screenshot_dir)

    # A second session asks its own question while the first ingests hostile text and more.
    corpus = tmp_path / "hostile"
    corpus.mkdir()
    (corpus / "evil.md").write_text(
        f'---\ntitle: "{HOSTILE}"\nrelations:\n  - {{type: DEPENDS_ON, target: redis.md}}\n---\n'
        f"The {HOSTILE} service depends on Redis.\n\n<script>alert(2)</script> uses Redis.\n", encoding="utf-8")
    (corpus / "more.md").write_text("\n\n".join(f"Batch job {i} writes report {i * 7} to the archive bucket."
                                              for i in range(120)), encoding="utf-8")
    open_page(page, "Corpus", "Add documents")
    folder_input = page.get_by_role("textbox", name="Folder or file on this machine")
    folder_input.fill(str(corpus))
    folder_input.press("Enter")
    wait_idle(page)

    other_dialogs: list[str] = []
    other = new_page(browser, other_dialogs)
    other.goto(live_app)
    other.get_by_text("Add documents").first.wait_for(timeout=LONG)
    wait_idle(other)
    open_page(other, "Compare", "Assembled context")
    question = other.get_by_role("textbox", name="Question")
    question.fill("Who owns the auth service?")
    question.press("Enter")
    other.get_by_text("Showing the results for").first.wait_for(timeout=LONG)

    page.get_by_role("button", name="Ingest this folder").click()
    other.get_by_role("button", name="Compare").click()
    other.get_by_text("Showing the results for").first.wait_for(state="detached", timeout=LONG)
    wait_idle(other)
    page.get_by_text("2 added").first.wait_for(timeout=LONG)
    wait_idle(page)
    assert_no_exception(other)
    assert other.get_by_role("textbox", name="Question").input_value() == "Who owns the auth service?"
    assert other.get_by_text("Ingested in").count() == 0  # the first session's report stays its own

    open_page(page, "Compare", "Assembled context")
    assert page.get_by_role("textbox", name="Question").input_value() == "If Redis goes down, what breaks?"

    # The hostile name is drawn and shown as text, escaped exactly once, on every page; nothing runs.
    open_page(page, "Graph", "Neighbours and evidence")
    # The reload on Compare started a new session, whose link named no entity: the whole graph is drawn.
    finder = page.locator('[data-testid="stSelectbox"]', has_text="Find an entity")
    assert finder.get_by_role("combobox").input_value() == ""
    assert_canvas_draws(page)
    assert "2)</script" in graph_labels(page)
    assert not any("onerror" in label for label in graph_labels(page))  # a note's title: hidden by default
    page.get_by_text("Show values and titles", exact=True).click()
    wait_idle(page)
    assert_canvas_draws(page)
    tooltip = hover_node(page, "onerror")
    assert tooltip.startswith("<img src=x onerror=alert(1") and "&lt;" not in tooltip
    page.wait_for_timeout(500)
    screenshot(page, "graph-hostile", screenshot_dir)
    open_page(page, "Canonicalization", "Suggested merges")
    open_page(page, "Compare", "Assembled context")
    question = page.get_by_role("textbox", name="Question")
    question.fill(f"What does {HOSTILE} depend on?")
    question.press("Enter")
    page.get_by_role("button", name="Compare").click()
    page.get_by_text("Showing the results for").first.wait_for(state="detached", timeout=LONG)
    wait_idle(page)
    assert_no_exception(page)
    assert page.get_by_text("onerror=alert(1", exact=False).count() > 0
    screenshot(page, "compare-hostile", screenshot_dir)
    assert dialogs == [] and other_dialogs == []
    assert not re.search(r"<img[^>]*onerror", page.content())

    # Removing documents: Cancel clears the choice for good, and a removal leaves the box empty.
    removal = "Remove documents"
    open_page(page, "Corpus", removal)
    doomed = "hostile/more.md"  # ids are paths below the folder ingested
    choose(page, removal, doomed)
    page.keyboard.press("Escape")  # the list of options closes (it covers the buttons below it)
    wait_idle(page)
    assert page.get_by_text(f"Remove {doomed}?").count() == 1
    page.get_by_role("button", name="Cancel").click()
    wait_idle(page)
    folder_input = page.get_by_role("textbox", name="Folder or file on this machine")
    folder_input.fill("/nowhere")  # an unrelated action: the prompt must not come back
    folder_input.press("Enter")
    wait_idle(page)
    assert page.get_by_text(f"Remove {doomed}?").count() == 0
    chosen = page.locator('[data-testid="stMultiSelect"]', has_text=removal).locator('[data-baseweb="tag"]')
    assert chosen.count() == 0
    choose(page, removal, doomed)
    page.keyboard.press("Escape")
    choose(page, removal, "planning.md")
    page.keyboard.press("Escape")
    wait_idle(page)
    assert page.get_by_text("Remove these 2 documents?").count() == 1
    page.get_by_role("button", name="Remove", exact=True).click()
    wait_idle(page)
    assert chosen.count() == 0 and page.get_by_text("Remove these 2 documents?").count() == 0
    assert_no_exception(page)
