"""Versioned prompt templates (jinja2) and the helpers that read a prompt or an answer back.

Four styles, each with an id and a version (`plain@1`, `quote@1`, `cot@1`, `decline@1`), defined in
prompts/styles.yaml; the system prompt (prompts/system.j2) and the passages block (prompts/user.j2) are shared.

Order of the prompt, chosen for KV-cache prefix reuse: [system: shared rules] [user: passages] [style's
instructions] [question]. A local model (llama.cpp) reuses the longest common token prefix of consecutive calls,
so the study orders calls question -> context (retrieved, oracle) -> style: the four styles of one context share
system + passages (nearly all the tokens) and only the short instructions + question are evaluated again; a change
of context re-evaluates the passages only. Putting the question before the passages would also share ~30 question
tokens across the two contexts, a negligible gain, while the question placed after long context is what model
vendors recommend for answer quality (Anthropic's long-context tips), so the question stays last.

Passages are shown as `<passage n="1" source="DOC p. 12">...</passage>` (pages shown 1-based); answers cite [n].
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import jinja2
import yaml

from finrag.core.contracts import Citation, Passage
from finrag.core.io import sha256_text

DECLINE_PHRASE = "I cannot answer this from the provided passages."
STYLES_ORDER = ("plain", "quote", "cot", "decline")

_PASSAGE_RE = re.compile(r'<passage n="(\d+)" source="([^"]*)">\n(.*?)\n</passage>', re.S)
_QUESTION_RE = re.compile(r"<question>\n(.*?)\n</question>", re.S)
_CITE_RE = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_ANSWER_RE = re.compile(
    r"^[ \t>*_#-]*(?:final\s+)?answer[*_]*\s*:[*_]*", re.I | re.M
)  # "- Answer:", "Final answer:"
_ANSWER_TAG = re.compile(
    r"</?answer\b[^>]*>", re.I
)  # "<answer>Yes, ...</answer>": a wrapper some models write


@dataclass(frozen=True)
class Style:
    name: str
    version: int
    description: str
    instructions: str

    @property
    def template_id(self) -> str:
        return f"{self.name}@{self.version}"


def _read(name: str) -> str:
    return resources.files("finrag.llm").joinpath("prompts", name).read_text(encoding="utf-8")


@cache
def styles() -> dict[str, Style]:
    """All prompt styles from prompts/styles.yaml, by name."""
    raw = yaml.safe_load(_read("styles.yaml"))
    return {name: Style(name=name, **spec) for name, spec in raw.items()}


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.DictLoader({"system.j2": _read("system.j2"), "user.j2": _read("user.j2")}),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def get_style(style: str) -> Style:
    name = style.split("@", 1)[0]
    try:
        st = styles()[name]
    except KeyError:
        raise KeyError(f"unknown prompt style '{style}' (known: {', '.join(sorted(styles()))})") from None
    if "@" in style and style != st.template_id:
        raise KeyError(f"prompt template '{style}' is not available: the current version is {st.template_id}")
    return st


def template_source(style: str) -> str:
    """Everything that shapes a style's prompt (for the version-pinning test)."""
    st = get_style(style)
    return "\n---\n".join([_read("system.j2"), _read("user.j2"), st.template_id, st.instructions])


def template_hash(style: str) -> str:
    return sha256_text(template_source(style))


def _passage_view(p: Passage | dict) -> dict:
    d = p.model_dump() if isinstance(p, Passage) else dict(p)
    if "n" not in d or "text" not in d:
        raise ValueError(f"a passage needs 'n' and 'text' (got keys {sorted(d)})")
    pages = d.get("pages") or []
    src = d.get("doc_id", "") or d.get("source", "")
    if pages:
        src = f"{src} p. {', '.join(str(int(x) + 1) for x in pages)}".strip()
    return {"n": int(d["n"]), "text": str(d["text"]), "source": src.replace('"', "'")}


def render(
    style: str, question: str, passages: Sequence[Passage | dict], *, document_mode: bool = False
) -> tuple[list[dict], str]:
    """Messages for one question: (messages, template_id). document_mode leaves the passage text out of the
    prompt (send `as_documents(passages)` alongside, for backends with native document citations)."""
    st = get_style(style)
    views = [_passage_view(p) for p in passages]
    env = _env()
    system = env.get_template("system.j2").render().strip()
    user = env.get_template("user.j2").render(
        passages=views, document_mode=document_mode, instructions=st.instructions, question=question.strip()
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user.strip()}], st.template_id


def as_documents(passages: list[Passage | dict]) -> list[dict]:
    """Passages as backend documents: {n, title, text}; document i (0-based) is passage passages[i].n."""
    out = []
    for p in passages:
        v = _passage_view(p)
        out.append({"n": v["n"], "title": f"[{v['n']}] {v['source']}".strip(), "text": v["text"]})
    return out


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
        passages = [{"n": int(n), "source": s, "text": t} for n, s, t in _PASSAGE_RE.findall(user)]
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
