"""The service's page in a real headless browser (Debian chromium + chromedriver, driven by Selenium), served by
uvicorn on 127.0.0.1 over the tiny study of test_serve.py. Skips with a reason when the browser is absent."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn

from finrag.serve.app import create_app
from finrag.serve.system import SelectedSystem, ServeParams
from test_labelling_browser import browser  # noqa: F401  (the shared headless-Chromium fixture)
from test_serve import _free_port, build_study

pytestmark = pytest.mark.browser


@pytest.fixture
def service_url(tmp_path, monkeypatch):
    monkeypatch.delenv("FINRAG_LLM_MODE", raising=False)
    monkeypatch.delenv("FINRAG_API_KEYS", raising=False)
    root = tmp_path / "study"
    root.mkdir()
    system = SelectedSystem(build_study(root), ServeParams())
    real_answer = system.answer

    def answer_with_every_verdict(question, top_k=None, use_filter=None, qid=None):
        """The real answer, plus two made-up claims, so the page's three verdict styles are all on show."""
        out = real_answer(question, top_k, use_filter, qid)
        if qid is None and "capital" in question:
            extra = {"passage": None, "start": None, "end": None, "evidence": "", "detail": ""}
            out["claims"] += [
                {"claim_id": 90, "text": "Beta spent $999 million.", "verdict": "contradicted", **extra},
                {"claim_id": 91, "text": "Beta is the largest firm.", "verdict": "unsupported", **extra},
            ]
        return out

    system.answer = answer_with_every_verdict  # type: ignore[method-assign]
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(system), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(10)


def test_pick_a_question_and_see_claims_spans_score_and_kappa(browser, service_url):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(service_url)
    wait = WebDriverWait(browser, 15)
    wait.until(lambda d: "Selected system: extractive-retrieved" in d.find_element(By.ID, "system-line").text)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#pick option")) == 3)
    Select(browser.find_element(By.ID, "pick")).select_by_value("fb1")
    assert (
        browser.find_element(By.ID, "question").get_attribute("value")
        == "What was ACME's net income in fiscal 2019?"
    )
    browser.find_element(By.ID, "ask-button").click()
    wait.until(lambda d: d.find_element(By.ID, "result").is_displayed())

    assert "$700 million" in browser.find_element(By.ID, "answer-text").text
    assert "Groundedness: 100%" in browser.find_element(By.ID, "groundedness").text
    assert "correct (gold: $700 million)" in browser.find_element(By.ID, "correctness").text
    claims = browser.find_elements(By.CSS_SELECTOR, "#claims li.claim")
    assert claims and all("supported" in c.get_attribute("class").split() for c in claims)
    # the cited span and the judge's supporting span are highlighted in the first passage
    first = browser.find_element(By.CSS_SELECTOR, "#passages .passage[data-n='1']")
    marks = first.find_elements(By.CSS_SELECTOR, "mark")
    assert marks and any("$700 million" in m.text for m in marks)
    assert {m.get_attribute("class") for m in marks} <= {"cited", "support"}
    rows = browser.find_elements(By.CSS_SELECTOR, "#kappa-table tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows[1:]] == ["expertqa", "findver"]
    assert "0.160" in rows[2].text and "[0.060, 0.260]" in rows[2].text


def test_a_typed_question_shows_every_verdict_and_errors_are_shown(browser, service_url):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(service_url)
    wait = WebDriverWait(browser, 15)
    wait.until(lambda d: "Selected system" in d.find_element(By.ID, "system-line").text)
    box = browser.find_element(By.ID, "question")
    box.send_keys("What did Beta spend on capital expenditure in 2019?")
    browser.find_element(By.ID, "top-k").send_keys("2")
    browser.find_element(By.ID, "ask-button").click()
    wait.until(lambda d: d.find_element(By.ID, "result").is_displayed())
    verdicts = [c.get_attribute("data-verdict") for c in browser.find_elements(By.CSS_SELECTOR, "#claims li")]
    assert {"supported", "contradicted", "unsupported"} <= set(verdicts), verdicts
    assert "source: live" in browser.find_element(By.ID, "summary").text
    assert "fell back to BM25" in browser.find_element(By.ID, "summary").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#passages .passage")) == 2

    # a question the server refuses (whitespace only passes the browser's `required`): the message is shown
    box.clear()
    box.send_keys("   ")
    browser.find_element(By.ID, "ask-button").click()
    wait.until(lambda d: "422" in d.find_element(By.ID, "status").text)
    assert "must not be empty" in browser.find_element(By.ID, "status").text
