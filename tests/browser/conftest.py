"""The live app for browser tests: ``streamlit run app.py`` on a free loopback port, and chromium."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, stop_process, wait_for_http

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module")
def live_app(tmp_path_factory):
    """The real app serving a fresh, empty workspace: yields its base URL."""
    port = free_port()
    folder = tmp_path_factory.mktemp("live")
    # Typed paths are read under the project and the tests' own folders only (app.allowed_roots).
    settings = folder / "settings.yaml"
    settings.write_text(f"app:\n  allowed_roots: [{json.dumps(str(ROOT))}, "
                        f"{json.dumps(str(tmp_path_factory.getbasetemp()))}]\n", encoding="utf-8")
    env = {**os.environ, "WORKBENCH_WORKSPACE": str(folder / "ws"), "WORKBENCH_SETTINGS": str(settings), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    log = open(folder / "streamlit.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/_stcore/health", proc, timeout=90)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc, timeout=15)
        log.close()
        print((folder / "streamlit.log").read_text(errors="replace")[-3000:])


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian chromium driven by Playwright (never ``playwright install``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
