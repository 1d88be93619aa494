"""Answer-quality flags: what makes an answer a degenerate one, whatever its grade or groundedness.

Why: read against the recorded answers, a small model's "answers" include copies of the prompt's own example,
copies of the passages block with its markup, verbatim passage text that answers nothing, the question repeated,
text cut at the token limit, nothing at all, and loops. A copy is grounded by construction and an echoed example
can look like a figure, so every metric is also given on the answers without a flag, and the primary endpoint
counts a flagged answer as not grounded. Each flag is a plain rule on the answer's text and its own prompt (the
rendered messages), so it holds for any prompt version and any model:

- ``empty``: no word left once citation markers and punctuation are removed (a stop sequence can leave this).
- ``cut_at_limit``: generation stopped at max_tokens.
- ``copied_markup``: the passages block's own markup (``<passage n=...>``, ``</passage>``, ``Passage [n] (...):``,
  ``(end of passages)``, ``<question>``) appears in the answer.
- ``prompt_echo``: a quoted example of the instructions or system prompt (three words or more), or a run of
  ``RUN`` words of them, appears in the answer while no passage holds it: the model repeats its
  instructions, not the filing. The decline prompt's prescribed reply is not an echo.
- ``question_echo``: every word of the answer (four or more) is a word of the question or filler ("the", "is"),
  and it repeats most of the question's words (an answer that picks one option of a choice question is no echo).
- ``passage_copy``: nearly all of a long enough answer is verbatim passage text, and the grader did not find it
  (strictly) correct: a copy that answers nothing.
- ``repetition``: one run of ``LOOP_NGRAM`` words three times or more.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from finrag.llm.prompts.parse import DECLINE_PHRASE, parse_prompt

FLAGS = (
    "empty",
    "cut_at_limit",
    "copied_markup",
    "prompt_echo",
    "question_echo",
    "passage_copy",
    "repetition",
)
RUN = 8  # words in a row: an echo of the instructions, or a copy of a passage
COPY_SHARE = 0.9  # share of the answer's words inside such runs
COPY_MIN_WORDS = 12  # shorter answers are too short to call a copy
QUESTION_COVER = (
    0.8  # an echo repeats most of the question (a choice answer repeats only the option it picks)
)
# words an echo of the question may add without saying anything ("What is X?" -> "The X is")
_FILLER = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "were",
        "of",
        "in",
        "for",
        "to",
        "and",
        "as",
        "by",
        "on",
        "its",
        "it",
        "this",
        "that",
    ]
)
LOOP_NGRAM = 10  # a loop repeats a whole clause, not a turn of phrase ("the passage states that")

_WORD = re.compile(r"[a-z0-9]+(?:[.,'][a-z0-9]+)*")
_CITE = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
# the passages block's markup, in either format: found in an answer it is a copy; taken out of the instructions
# before their quoted examples are read (a copy cut at the token limit may end inside a tag)
_MARKUP = re.compile(
    r"<passage\b[^>]*>?|</passage>|^\s*passage \[\d+\] \([^\n]*?(?:\):|$)|\(end of passages\)|</?question>",
    re.IGNORECASE | re.MULTILINE,
)
_QUOTED = re.compile(r"[\"“]([^\"”]{3,200})[\"”]")


def words(text: str) -> list[str]:
    """Lower-case words and numbers ("$8.1 billion" -> ["8.1", "billion"]), citation markers removed."""
    return _WORD.findall(_CITE.sub(" ", text).lower())


def _ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _contains(hay: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(hay[i : i + n]) == tuple(needle) for i in range(len(hay) - n + 1))


def instruction_texts(messages: Sequence[dict], passages: Sequence[str], question: str) -> list[str]:
    """The prompt's own words: the system message and the user message without its passages and question."""
    out = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, str):
            continue
        for p in passages:
            content = content.replace(p, " ")
        if question:
            content = content.replace(question, " ")
        out.append(_MARKUP.sub(" ", content))
    return out


_DECLINE_WORDS = _WORD.findall(DECLINE_PHRASE.lower())  # the decline prompt's prescribed reply: never an echo


def prompt_echo(
    answer_words: list[str],
    instructions: Sequence[str],
    passage_tokens: Sequence[list[str]],
    passage_runs: set[tuple[str, ...]],
) -> bool:
    """Does the answer repeat an example or a run of words of the instructions that no passage holds?"""
    for text in instructions:
        for quoted in _QUOTED.findall(text):
            q = words(quoted)
            if len(q) < 3 or _contains(_DECLINE_WORDS, q) or not _contains(answer_words, q):
                continue
            if not any(_contains(p, q) for p in passage_tokens):
                return True
        runs = _ngrams(words(text), RUN) - _ngrams(_DECLINE_WORDS, RUN)
        if runs & _ngrams(answer_words, RUN) - passage_runs:
            return True
    return False


def copied_share(answer_words: list[str], passage_runs: set[tuple[str, ...]]) -> float:
    """Share of the answer's words that lie in a run of RUN words some passage holds."""
    if len(answer_words) < RUN:
        return 0.0
    covered = [False] * len(answer_words)
    for i in range(len(answer_words) - RUN + 1):
        if tuple(answer_words[i : i + RUN]) in passage_runs:
            covered[i : i + RUN] = [True] * RUN
    return sum(covered) / len(answer_words)


def repeats(answer_words: list[str]) -> bool:
    counts = Counter(
        tuple(answer_words[i : i + LOOP_NGRAM]) for i in range(len(answer_words) - LOOP_NGRAM + 1)
    )
    return bool(counts) and max(counts.values()) >= 3


def answer_flags(
    text: str,
    *,
    messages: Sequence[dict],
    finish_reason: str | None,
    strictly_correct: bool,
) -> list[str]:
    """The flags of one answer, in FLAGS order (see the module docstring). The passages and the question are read
    back from the rendered messages: what the model saw, in either passages format."""
    question, shown = parse_prompt(list(messages))
    passages = [str(p["text"]) for p in shown]
    found: set[str] = set()
    answer_words = words(text)
    if not answer_words:
        found.add("empty")
    if finish_reason == "length":
        found.add("cut_at_limit")
    if _MARKUP.search(text):
        found.add("copied_markup")
    passage_tokens = [words(p) for p in passages]
    passage_runs = {run for p in passage_tokens for run in _ngrams(p, RUN)}  # once, for both checks below
    if answer_words:
        instructions = instruction_texts(messages, passages, question)
        if prompt_echo(answer_words, instructions, passage_tokens, passage_runs):
            found.add("prompt_echo")
        q_words = set(words(question))
        new = [w for w in answer_words if w not in q_words and w not in _FILLER]
        asked = q_words - _FILLER
        covered = len(asked & set(answer_words)) >= QUESTION_COVER * len(asked)
        if len(answer_words) >= 4 and asked and not new and covered:
            found.add("question_echo")
        if (
            len(answer_words) >= COPY_MIN_WORDS
            and not strictly_correct
            and copied_share(answer_words, passage_runs) >= COPY_SHARE
        ):
            found.add("passage_copy")
        if repeats(answer_words):
            found.add("repetition")
    return [f for f in FLAGS if f in found]
