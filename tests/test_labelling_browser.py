"""The labelling page in a real headless browser (Debian chromium + chromedriver, driven by Selenium).

Skips with a reason when the browser or its driver is not installed
(`apt-get install -y chromium chromium-driver`).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from finrag.core.contracts import Answer, Passage, Question
from finrag.core.io import write_jsonl
from finrag.ingest.human_claims import load_finrag_labels
from finrag.trust.labelling import make_server

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,1600",
)


@pytest.fixture
def browser(tmp_path):
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} absent: apt-get install -y chromium chromium-driver to run this test"
        )
    from selenium import webdriver  # the dev group installs it: never skipped
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
    # an explicit driver path: Selenium Manager (which downloads drivers) is never asked
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def server(tmp_path):
    passages = [
        Passage(
            n=1,
            chunk_id="c1",
            doc_id="3M_2018_10K",
            pages=[59],
            text="Purchases of PP&E were $1,577 million.",
        ),
        Passage(
            n=2, chunk_id="c2", doc_id="3M_2018_10K", pages=[47], text="<b>bold?</b> PP&E net $8,738 million"
        ),
    ]
    ans = Answer(
        qid="q1",
        run_id="run-x",
        backend="b",
        model="m",
        prompt_style="plain",
        template_id="t@1",
        context_mode="retrieved",
        passages=passages,
        prompt=[],
        text="3M spent $1,577 million on capex in FY2018 [1]. Its net PP&E was $9.1 billion [2].",
    )
    write_jsonl(tmp_path / "answers.jsonl", [ans])
    write_jsonl(tmp_path / "questions.jsonl", [Question(qid="q1", question="What was 3M's FY2018 capex?")])
    srv = make_server(
        tmp_path / "answers.jsonl",
        tmp_path / "labels",
        labeller="bob",
        questions_path=tmp_path / "questions.jsonl",
    )
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_label_two_claims_in_the_browser(browser, server, tmp_path):
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.url)
    assert "What was 3M's FY2018 capex?" in browser.find_element(By.ID, "question").text
    claims = browser.find_elements(By.CSS_SELECTOR, "fieldset.claim .claim-text")
    assert [c.text for c in claims] == [
        "3M spent $1,577 million on capex in FY2018.",
        "Its net PP&E was $9.1 billion.",
    ]
    # the passage's markup is shown as text, not rendered
    assert "<b>bold?</b>" in browser.find_element(By.ID, "passage-2").text
    assert "0 of 1 answers labelled (0 of 2 claims)" in browser.find_element(By.ID, "progress").text
    assert not [r for r in browser.find_elements(By.CSS_SELECTOR, "input[type=radio]") if r.is_selected()]

    # saving with nothing chosen is refused on the page, and writes nothing
    browser.find_element(By.ID, "save").click()
    assert "at least one claim" in browser.find_element(By.ID, "status").text
    assert not (tmp_path / "labels" / "bob.jsonl").exists()

    browser.find_element(By.ID, "v-1-supported").click()
    browser.find_element(By.ID, "v-2-contradicted").click()
    browser.find_element(By.ID, "note-2").send_keys("filing says $8,738 million")
    save = browser.find_element(By.ID, "save")
    save.click()

    # after saving, the page loads the next open answer (here every answer is done, so the same one again,
    # with the labeller's own choices filled in by the server)
    # Wait for the new page's own text rather than for the old button to go stale: Chrome can answer a
    # query about a node of the page being replaced with an "unknown error" instead of a stale-element
    # error (it failed CI once), so any WebDriver error while the page changes means "not yet".
    def reloaded(driver) -> bool:
        progress = driver.find_element(By.ID, "progress").text
        ready = driver.execute_script("return document.readyState") == "complete"
        return ready and "1 of 1 answers labelled" in progress

    WebDriverWait(browser, 10, ignored_exceptions=(WebDriverException,)).until(reloaded)
    assert "1 of 1 answers labelled (2 of 2 claims)" in browser.find_element(By.ID, "progress").text
    assert "Every answer is labelled" in browser.page_source
    assert browser.find_element(By.ID, "v-2-contradicted").is_selected()
    assert browser.find_element(By.ID, "note-2").get_attribute("value") == "filing says $8,738 million"

    lines = (tmp_path / "labels" / "bob.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    assert [(r["claim_id"], r["verdict"], r["note"]) for r in recs] == [
        ("run-x/q1/0#1", "supported", ""),
        ("run-x/q1/0#2", "contradicted", "filing says $8,738 million"),
    ]
    assert all(r["labeller"] == "bob" for r in recs)
    loaded = load_finrag_labels(tmp_path / "labels")
    assert sorted(it.human for it in loaded.items) == ["contradicted", "supported"]
