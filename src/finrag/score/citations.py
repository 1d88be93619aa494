"""Citation quality, as ALCE (Gao et al., 2023) defines it, with any finrag judge in place of ALCE's NLI model.

- Citation recall of a sentence: 1 when it cites at least one passage and the union of its cited passages
  supports it. Reported over all factual sentences (ALCE: an uncited sentence scores 0) and over cited ones.
- Citation precision of a citation: it counts as precise when its sentence is supported by the union of its
  citations AND the citation is needed: it supports the sentence alone, or the other citations without it do
  not. A citation of a sentence whose citations do not support it, or a number naming no passage, is imprecise.
- Offset citations (backends that return cited spans): the span must lie inside the named passage's text and
  `cited_text` must equal the passage text at those offsets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from finrag.core.contracts import Answer, Citation, Passage
from finrag.score.claims import as_seen, is_meta_sentence, parse_markers, split_sentences, strip_citations


def numbered_passages(
    passages: Sequence | Mapping, text: Callable[[Passage], str] | None = None
) -> dict[int, str]:
    """{n: text}: contracts.Passage keep their n (their text read by `text`, default the bare passage text);
    plain strings are numbered from 1 as shown to the model."""
    if isinstance(passages, Mapping):
        return {int(k): (v if isinstance(v, str) else v.text) for k, v in passages.items()}
    out: dict[int, str] = {}
    for i, p in enumerate(passages, 1):
        if isinstance(p, Passage):
            out[p.n] = text(p) if text else p.text
        elif isinstance(p, dict):
            out[int(p.get("n", i))] = str(p["text"])
        else:
            out[i] = str(p)
    return out


def sentence_citations(answer_text: str) -> list[dict]:
    """Each factual sentence with the passage numbers it cites (refusals / meta sentences left out)."""
    out = []
    for start, end, raw in split_sentences(answer_text):
        text = strip_citations(raw)
        if not any(ch.isalnum() for ch in text) or is_meta_sentence(text):
            continue
        out.append({"start": start, "end": end, "text": text, "cited": parse_markers(raw)})
    return out


def _supported(judge, sentence: str, texts: list[str]) -> bool:
    return bool(texts) and judge.judge(sentence, texts).verdict == "supported"


def citation_scores(answer_text: str, passages: Sequence | Mapping, judge) -> dict:
    """ALCE citation recall and precision of one answer, with per-sentence detail (the judge reads each cited
    passage as the model saw it: `claims.as_seen`)."""
    pmap = numbered_passages(passages, text=as_seen)
    sents = sentence_citations(answer_text)
    n_cit = n_precise = n_invalid = 0
    recall_hits = 0
    detail = []
    for s in sents:
        valid = [n for n in s["cited"] if n in pmap]
        invalid = [n for n in s["cited"] if n not in pmap]
        n_cit += len(s["cited"])
        n_invalid += len(invalid)
        joint = _supported(judge, s["text"], [pmap[n] for n in valid])
        recall_hits += int(joint)
        precise: dict[int, bool] = {n: False for n in s["cited"]}
        if joint:
            if len(valid) == 1:
                precise[valid[0]] = True
            else:
                for n in valid:
                    alone = _supported(judge, s["text"], [pmap[n]])
                    rest = [pmap[m] for m in valid if m != n]
                    precise[n] = alone or not _supported(judge, s["text"], rest)
        n_precise += sum(precise.values())
        detail.append({**s, "invalid": invalid, "supported_by_citations": joint, "precise": precise})
    n_s = len(sents)
    n_cited = sum(1 for s in sents if s["cited"])
    return {
        "n_sentences": n_s,
        "n_cited_sentences": n_cited,
        "n_citations": n_cit,
        "n_invalid_citations": n_invalid,
        "citation_recall": recall_hits / n_s if n_s else None,
        "citation_recall_cited": recall_hits / n_cited if n_cited else None,
        "citation_precision": n_precise / n_cit if n_cit else None,
        "judge": getattr(judge, "name", type(judge).__name__),
        "sentences": detail,
    }


def verify_offset_citation(citation: Citation, passages: Mapping[int, str]) -> str:
    """ "ok", or why not: no_offsets, unknown_passage, bad_offsets (outside the passage), text_mismatch."""
    if citation.start is None or citation.end is None:
        return "no_offsets"
    text = passages.get(citation.passage)
    if text is None:
        return "unknown_passage"
    if not (0 <= citation.start < citation.end <= len(text)):
        return "bad_offsets"
    if citation.cited_text and text[citation.start : citation.end] != citation.cited_text:
        return "text_mismatch"
    return "ok"


def verify_offset_citations(citations: Sequence[Citation], passages: Sequence | Mapping) -> dict:
    """Check every offset citation of an answer; counts by status and the share valid among those with offsets."""
    pmap = numbered_passages(passages)
    statuses = [verify_offset_citation(c, pmap) for c in citations]
    counts = Counter(statuses)
    with_offsets = len(statuses) - counts.get("no_offsets", 0)
    return {
        "n": len(statuses),
        "n_with_offsets": with_offsets,
        "n_valid": counts.get("ok", 0),
        "valid_share": counts.get("ok", 0) / with_offsets if with_offsets else None,
        "by_status": dict(counts),
        "statuses": statuses,
    }


def score_answer_citations(answer: Answer, judge) -> dict:
    """citation_scores on an Answer's text and passages, plus verification of its offset citations."""
    out = citation_scores(answer.text, answer.passages, judge)
    out["offsets"] = verify_offset_citations(answer.citations, answer.passages)
    return out
