"""The ragas faithfulness judge over a fake model behind the real response cache (no real model, no network).

The fake reads ragas' own prompts: for the statement step it returns {"statements": [...]} (the answer split on
"; "), for the NLI step a 0/1 verdict per statement (1 when every content word of the statement is in the
context). Scripted malformed replies test re-asks and the parse-failure counts.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from finrag.llm.backends.base import Backend, Completion
from finrag.llm.cache import CachedLLM, CacheMiss
from finrag.score.judges.base import JUDGES, make_judge
from finrag.score.judges.ragas import REASK, load_ragas

R = load_ragas()  # ragas is a hard dependency: a failing import fails these tests, it never skips them

from finrag.score.judges.ragas import RagasFaithfulnessJudge  # noqa: E402

PASSAGES = [
    "Acme Corp reported net sales of $120 million in fiscal 2023.",
    "Acme Corp opened a new plant in Ohio in 2021.",
]
_STOP = {"the", "and", "was", "were", "its", "has", "had", "for", "with", "new", "that", "this"}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def _input(prompt: str) -> dict:
    """The JSON input ragas put at the end of its prompt ("input: {...}\\nOutput: ")."""
    return json.loads(prompt.rsplit("\ninput: ", 1)[1].rsplit("\nOutput:", 1)[0])


def is_statement_step(prompt: str) -> bool:
    return "Break down each sentence" in prompt


def good_reply(messages: list[dict]) -> str:
    prompt = messages[0]["content"]
    data = _input(prompt)
    if is_statement_step(prompt):
        return json.dumps({"statements": [s.strip() for s in data["answer"].split(";") if s.strip()]})
    ctx = _words(data["context"])
    out = []
    for s in data["statements"]:
        missing = sorted(_words(s) - ctx)
        reason = f"not in the context: {', '.join(missing)}" if missing else "stated in the context"
        out.append({"statement": s, "reason": reason, "verdict": 0 if missing else 1})
    # like many models: a fenced block after a sentence, which ragas' extract_json must cope with
    return "Here is the result:\n```json\n" + json.dumps({"statements": out}) + "\n```"


class FakeRagasModel(Backend):
    """A finrag backend whose replies come from `script(messages)`; counts calls."""

    name = "fake-ragas"
    model = "fake"

    def __init__(self, script=good_reply):
        self.script = script
        self.n = 0

    def _complete(self, messages, decoding, documents):
        self.n += 1
        return Completion(text=self.script(messages), model=self.model)


def _judge(tmp_path, script=good_reply, mode="auto", **params):
    backend = FakeRagasModel(script)
    llm = CachedLLM(backend if mode != "replay" else backend.identity(), tmp_path, mode=mode, stage="judge")
    return RagasFaithfulnessJudge(llm, **params), backend


def test_supported_and_unsupported_claims(tmp_path):
    judge, backend = _judge(tmp_path)
    ok = judge.judge(
        "Acme Corp reported net sales of $120 million in fiscal 2023 [1].", PASSAGES, claim_id="a"
    )
    bad = judge.judge("Acme Corp reported net sales of $150 million in fiscal 2023.", PASSAGES, claim_id="b")
    assert (ok.verdict, ok.claim_id, ok.judge) == ("supported", "a", "ragas")
    assert ok.detail["score"] == 1.0 and ok.detail["statements"] == [
        "Acme Corp reported net sales of $120 million in fiscal 2023."
    ]
    assert ok.detail["verdicts"][0]["verdict"] == 1 and ok.detail["calls"] == 2
    assert bad.verdict == "unsupported" and bad.detail["score"] == 0.0
    assert "$150" in bad.evidence and "parse_failed" not in bad.detail
    assert backend.n == 4 and judge.stats["calls"] == 4 and judge.stats["parse_failures"] == 0


def test_threshold_applies_to_the_share_of_statements(tmp_path):
    half = "Acme Corp opened a plant in Ohio; Acme Corp opened a plant in Texas"
    strict, _ = _judge(tmp_path)
    v = strict.judge(half, PASSAGES)
    assert v.detail["score"] == 0.5 and v.verdict == "unsupported"  # default threshold 1.0: all of it
    lenient, backend = _judge(tmp_path, threshold=0.5)
    assert lenient.judge(half, PASSAGES).verdict == "supported" and backend.n == 0  # same prompts: cached
    other, backend = _judge(tmp_path, replicate=1)
    assert (
        other.judge(half, PASSAGES).detail["score"] == 0.5 and backend.n == 2
    )  # another replicate: new calls


def test_prompts_are_recorded_and_replay_byte_for_byte_with_no_model_calls(tmp_path):
    claims = [
        "Acme Corp reported net sales of $120 million in fiscal 2023.",
        "Acme Corp opened a plant in Peru.",
    ]
    rec, backend = _judge(tmp_path)
    first = rec.judge_batch(claims, PASSAGES)
    assert [v.verdict for v in first] == ["supported", "unsupported"] and backend.n == 4
    shards = sorted((tmp_path / "judge").glob("*.jsonl"))
    before = {p: p.read_bytes() for p in shards}
    entries = [json.loads(line) for p in shards for line in p.read_text().splitlines()]
    assert len(entries) == 4
    for e in entries:
        assert e["request"]["template_id"] == f"ragas-faithfulness@{R.version}"
        assert (
            e["request"]["decoding"]["temperature"] == 0.0 and e["request"]["decoding"]["max_tokens"] == 1024
        )
        assert e["item_id"].startswith("ragas:") and len(e["request"]["messages"]) == 1
    assert sum(is_statement_step(e["request"]["messages"][0]["content"]) for e in entries) == 2

    replay, _ = _judge(tmp_path, mode="replay")
    again = replay.judge_batch(claims, PASSAGES)
    assert [v.model_dump() for v in again] == [v.model_dump() for v in first]
    assert replay.stats["calls"] == replay.stats["cache_hits"] == 4 and backend.n == 4
    assert {p: p.read_bytes() for p in sorted((tmp_path / "judge").glob("*.jsonl"))} == before
    with pytest.raises(CacheMiss):  # a claim never recorded is a hard error in replay, not a parse failure
        replay.judge("Acme Corp has 10 plants.", PASSAGES)
    assert replay.stats["parse_failures"] == 0


def test_malformed_replies_are_counted_and_never_supported(tmp_path):
    def script(messages):
        prompt, last = messages[0]["content"], messages[-1]["content"]
        data = _input(prompt)
        said = data["answer"] if is_statement_step(prompt) else " ".join(data["statements"])
        if "garbage" in said:
            return "Sure! The statement is supported."  # no JSON, even when re-asked
        if "once" in said and is_statement_step(prompt) and last != REASK:
            return "{'statements': ['single quotes']}"  # invalid JSON, fixed on the re-ask
        if "empty" in said:
            return '{"statements": []}'  # parses, but ragas' score is NaN
        if "two" in said and not is_statement_step(prompt):
            return json.dumps({"statements": [{"statement": said, "reason": "?", "verdict": 2}]})
        return good_reply(messages)

    judge, backend = _judge(tmp_path, script)
    garbage = judge.judge("Acme Corp garbage sales.", PASSAGES)
    assert garbage.verdict == "unsupported" and garbage.detail["parse_failed"] is True
    assert garbage.detail["calls"] == 2 and len(garbage.detail["parse_errors"]) == 2  # first try + one re-ask
    assert garbage.detail["score"] is None and garbage.detail["statements"] is None
    once = judge.judge("Acme Corp opened a plant in Ohio once", ["Acme Corp opened a plant in Ohio once."])
    assert once.verdict == "supported" and "parse_failed" not in once.detail and once.detail["calls"] == 3
    empty = judge.judge("Acme Corp empty claim.", PASSAGES)
    assert empty.verdict == "unsupported" and empty.detail["parse_failure"] == "no statements extracted"
    two = judge.judge("Acme Corp opened two plants.", PASSAGES)
    assert two.verdict == "unsupported" and two.detail["parse_failure"] == "a verdict other than 0/1"
    assert judge.stats["parse_failures"] == 3 and judge.stats["reasks"] == 2 and judge.stats["claims"] == 4
    assert backend.n == judge.stats["calls"] == 2 + 3 + 1 + 2

    no_retry, _ = _judge(tmp_path, script, max_retries=0)
    v = no_retry.judge("Acme Corp garbage sales.", PASSAGES)  # its first try is already cached: no new call
    assert v.detail["parse_failed"] and v.detail["calls"] == 1 and no_retry.stats["parse_failures"] == 1


def test_statements_copying_the_placeholder_question_are_left_out(tmp_path):
    def script(messages):
        prompt = messages[0]["content"]
        data = _input(prompt)
        if is_statement_step(prompt):  # like the 0.5B model: the placeholder question becomes a statement
            claims = [x.strip() for x in data["answer"].split(";") if x.strip()]
            return json.dumps({"statements": [f"The question is {data['question']}.", *claims]})
        return good_reply(messages)

    judge, _ = _judge(tmp_path, script)
    v = judge.judge("Acme Corp reported net sales of $120 million in fiscal 2023.", PASSAGES)
    assert v.verdict == "supported" and v.detail["score"] == 1.0  # the placeholder's 0 no longer counts
    assert v.detail["placeholder_statements_dropped"] == 1

    def only_placeholder(messages):
        prompt = messages[0]["content"]
        data = _input(prompt)
        if is_statement_step(prompt):
            return json.dumps({"statements": [f"The question is {data['question']}."]})
        return good_reply(messages)

    judge, _ = _judge(tmp_path / "b", only_placeholder)
    v = judge.judge("Acme Corp reported net sales of $120 million in fiscal 2023.", PASSAGES)
    assert v.verdict == "unsupported" and v.detail["parse_failed"] is True
    assert v.detail["parse_failure"] == "only the placeholder question was extracted as a statement"


def test_nothing_to_judge_costs_no_call_and_is_not_a_parse_failure(tmp_path):
    judge, backend = _judge(tmp_path)
    v = judge.judge("Acme Corp sold $120 million.", [])
    assert v.verdict == "unsupported" and v.detail["skipped"] == "no passages"
    assert backend.n == 0 and judge.stats["parse_failures"] == 0 and judge.stats["skipped"] == 1


def test_registered_offline_and_usable_inside_an_event_loop(tmp_path, monkeypatch):
    import ragas._analytics as analytics

    assert "ragas" in JUDGES.names()
    with pytest.raises(ValueError, match="needs an LLM"):
        make_judge("ragas")
    posts = []
    monkeypatch.setattr(analytics.requests, "post", lambda *a, **k: posts.append(a))
    judge = make_judge("ragas", llm=CachedLLM(FakeRagasModel(), tmp_path, stage="judge"), threshold=0.5)
    assert isinstance(judge, RagasFaithfulnessJudge) and judge.threshold == 0.5

    async def inside_a_loop():
        return judge.judge("Acme Corp opened a plant in Ohio.", PASSAGES)

    assert asyncio.run(inside_a_loop()).verdict == "supported"
    assert analytics.do_not_track() and posts == []
