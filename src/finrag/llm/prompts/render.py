"""Versioned prompt templates (jinja2, in templates/): every prompt finrag sends has an id and a version.

Generation: four styles (`plain@1`, `quote@1`, `cot@1`, `decline@1`), defined in templates/styles.yaml; the system
prompt (templates/system.j2) and the passages block (templates/user.j2) are shared. The scoring tasks (the LLM
judge `judge-claims@1`, the claim splitter `claims-split@1`, the grader `grade-correctness@1`) are in
templates/tasks.yaml (`task_prompt(template_id).messages(...)`).

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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import jinja2
import yaml

from finrag.core.contracts import Passage
from finrag.core.io import sha256_text

STYLES_ORDER = ("plain", "quote", "cot", "decline")


@dataclass(frozen=True)
class Style:
    """One version of a prompt style. `passages` names the passages-block template it renders (user.j2 for the
    first versions, user@2.j2 for the later ones: every pinned version keeps rendering the text it was recorded
    with); `stop` holds stop sequences that belong to the prompt (merged into the call's decoding)."""

    name: str
    version: int
    description: str
    instructions: str
    passages: str = "user.j2"
    stop: tuple[str, ...] = ()

    @property
    def template_id(self) -> str:
        return f"{self.name}@{self.version}"

    def decoding(self, base: dict) -> dict:
        """`base` with this style's stop sequences added (none: `base` unchanged, so v1 keys stay as recorded)."""
        if not self.stop:
            return dict(base)
        stop = base.get("stop") or []
        stop = [stop] if isinstance(stop, str) else list(stop)
        return {**base, "stop": [*stop, *(s for s in self.stop if s not in stop)]}


def _read(name: str) -> str:
    return resources.files("finrag.llm.prompts").joinpath("templates", name).read_text(encoding="utf-8")


@cache
def style_versions() -> dict[str, dict[int, Style]]:
    """Every version of every prompt style in prompts/styles.yaml: name -> version -> Style."""
    raw = yaml.safe_load(_read("styles.yaml"))
    out: dict[str, dict[int, Style]] = {}
    for name, versions in raw.items():
        out[name] = {}
        for spec in versions:
            spec = dict(spec)
            spec["stop"] = tuple(spec.get("stop") or ())
            style = Style(name=name, **spec)
            out[name][style.version] = style
    return out


@cache
def styles() -> dict[str, Style]:
    """The current (newest) version of each prompt style, by name."""
    return {name: versions[max(versions)] for name, versions in style_versions().items()}


@cache
def _env() -> jinja2.Environment:
    names = {st.passages for versions in style_versions().values() for st in versions.values()}
    return jinja2.Environment(
        loader=jinja2.DictLoader({"system.j2": _read("system.j2"), **{n: _read(n) for n in sorted(names)}}),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def get_style(style: str) -> Style:
    """A style by name (its current version) or pinned as `name@version` (any version styles.yaml keeps)."""
    name, _, version = style.partition("@")
    try:
        versions = style_versions()[name]
    except KeyError:
        raise KeyError(f"unknown prompt style '{style}' (known: {', '.join(sorted(styles()))})") from None
    if not version:
        return versions[max(versions)]
    if not version.isdigit() or int(version) not in versions:
        known = ", ".join(f"{name}@{v}" for v in sorted(versions))
        raise KeyError(f"prompt template '{style}' is not available (known versions: {known})")
    return versions[int(version)]


def style_name(style: str) -> str:
    """The style's name without a pinned version ('plain@2' -> 'plain'): what run ids and records carry."""
    return style.partition("@")[0]


def template_source(style: str) -> str:
    """Everything that shapes a style's prompt (for the version-pinning test)."""
    st = get_style(style)
    parts = [_read("system.j2"), _read(st.passages), st.template_id, st.instructions]
    if st.stop:
        parts.append("stop: " + " | ".join(st.stop))
    return "\n---\n".join(parts)


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
    user = env.get_template(st.passages).render(
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


# ---------------------------------------------------------------- the scoring tasks' prompts (judge, splitter, grader)


@dataclass(frozen=True)
class TaskPrompt:
    """One versioned task prompt from templates/tasks.yaml: a fixed system text and a jinja2 user template."""

    name: str
    version: int
    description: str
    system: str
    user: str

    @property
    def template_id(self) -> str:
        return f"{self.name}@{self.version}"

    def messages(self, **variables: object) -> list[dict]:
        """[system, user] messages with the variables filled in (a missing one is an error)."""
        user = _task_env().from_string(self.user).render(**variables)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def source_hash(self) -> str:
        """A hash of everything that shapes the prompt (for the version-pinning test)."""
        return sha256_text("\n---\n".join([self.template_id, self.system, self.user]))


@cache
def _task_env() -> jinja2.Environment:
    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


@cache
def task_prompts() -> dict[str, TaskPrompt]:
    """Every task prompt of templates/tasks.yaml, by name."""
    raw = yaml.safe_load(_read("tasks.yaml"))
    return {name: TaskPrompt(name=name, **spec) for name, spec in raw.items()}


def task_prompt(template_id: str) -> TaskPrompt:
    """The task prompt `name@version`; asking for a version that is not the current one is an error, so a caller
    pinned to an old text never silently gets a new one."""
    name, _, version = template_id.partition("@")
    try:
        prompt = task_prompts()[name]
    except KeyError:
        raise KeyError(
            f"unknown task prompt '{template_id}' (known: {', '.join(sorted(task_prompts()))})"
        ) from None
    if version and template_id != prompt.template_id:
        raise KeyError(
            f"task prompt '{template_id}' is not available: the current version is {prompt.template_id}"
        )
    return prompt
