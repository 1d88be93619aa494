"""Reading prompts and answers back: the question and passages of a rendered prompt, the [n] citations of an
answer, its final answer line, and whether it declines with the prompt's phrase."""

from __future__ import annotations

import re

from finrag.core.contracts import Citation

DECLINE_PHRASE = "I cannot answer this from the provided passages."

_PASSAGE_RE = re.compile(r'<passage n="(\d+)" source="([^"]*)">\n(.*?)\n</passage>', re.S)
# the passages block of the later style versions (templates/user@2.j2): a header line per passage, no markup a
# model can copy as a unit, and an end line
_PASSAGE_V2_RE = re.compile(
    r"^Passage \[(\d+)\] \(([^\n]*)\):\n(.*?)(?=\n\nPassage \[\d+\] \(|\n\n\(end of passages\))", re.S | re.M
)
_QUESTION_RE = re.compile(r"<question>\n(.*?)\n</question>", re.S)
_CITE_RE = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_ANSWER_RE = re.compile(
    r"^[ \t>*_#-]*(?:final\s+)?answer[*_]*\s*:[*_]*", re.I | re.M
)  # "- Answer:", "Final answer:"
_ANSWER_TAG = re.compile(
    r"</?answer\b[^>]*>", re.I
)  # "<answer>Yes, ...</answer>": a wrapper some models write


def parse_prompt(messages: list[dict], documents: list[dict] | None = None) -> tuple[str, list[dict]]:
    """Read back (question, passages [{n, text, source}]) from rendered messages (+ documents, if any)."""
    user = "\n".join(
        m["content"] for m in messages if m.get("role") == "user" and isinstance(m["content"], str)
    )
    qs = _QUESTION_RE.findall(user)
    question = qs[-1] if qs else user.strip().splitlines()[-1] if user.strip() else ""
    if documents:
        passages = [
            {"n": int(d.get("n", i + 1)), "text": d["text"], "source": d.get("title", "")}
            for i, d in enumerate(documents)
        ]
    else:
        found = _PASSAGE_RE.findall(user) or _PASSAGE_V2_RE.findall(user)
        passages = [{"n": int(n), "source": s, "text": t} for n, s, t in found]
    return question, passages


def cited_passages(text: str) -> list[int]:
    """Passage numbers cited as [n], [n, m] or [n][m], in order of first appearance."""
    seen: list[int] = []
    for group in _CITE_RE.findall(text):
        for n in re.split(r"\s*[,;]\s*", group):
            if int(n) not in seen:
                seen.append(int(n))
    return seen


def bracket_citations(text: str) -> list[Citation]:
    """Citations from [n] markers (no offsets: the model gave none)."""
    return [Citation(passage=n) for n in cited_passages(text)]


def extract_answer(text: str) -> str:
    """The final answer: the part after 'Answer:' when the model wrote one (cot style), else the whole text; an
    <answer> wrapper is dropped so that the answer's first word ("Yes, ...") stays its first word."""
    heads = list(_ANSWER_RE.finditer(text))
    final = text[heads[-1].end() :] if heads else text
    while heads and (again := _ANSWER_RE.match(final.strip())):  # "Final answer: Answer: $0"
        final = final.strip()[again.end() :]
    return _ANSWER_TAG.sub(" ", final).strip()


def is_decline(text: str) -> bool:
    return DECLINE_PHRASE.lower().rstrip(".") in " ".join(text.lower().split())
