"""Evaluation datasets as corpora (one scope each) and queries with gold references.

Nothing here knows an answer: gold references come from the data files and are only used to score.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Doc:
    ref: str  # the dataset's own id (LoCoMo dia_id, MADial memory id)
    text: str
    occurred_at: str | None = None  # RFC 3339


@dataclass
class Query:
    corpus: str
    text: str
    gold: set[str]
    category: str
    alt_gold: set[str] | None = None  # errata-corrected evidence, when known
    qid: str = ""


@dataclass
class Dataset:
    name: str
    corpora: dict[str, list[Doc]] = field(default_factory=dict)
    queries: list[Query] = field(default_factory=list)


def evidence_ids(raw: object) -> set[str]:
    """LoCoMo evidence ids, including malformed ones such as 'D1:3; D1:5' or 'D 1:3'."""
    items = raw if isinstance(raw, list) else [raw]
    found: set[str] = set()
    for item in items:
        found.update(_DIA_ID.findall(re.sub(r"\s+", "", str(item))))
    return found


def locomo_time(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' → '2023-05-08T13:56:00Z' (LoCoMo gives no zone; UTC is assumed)."""
    try:
        parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def load_locomo(path: Path, errata: Path | None = None) -> Dataset:
    data = json.loads(path.read_text())
    corrections: dict[str, set[str]] = {}
    if errata is not None and errata.exists():
        for record in json.loads(errata.read_text()):
            if record.get("cited_evidence") != record.get("correct_evidence"):
                corrections[record["question"].strip()] = evidence_ids(record.get("correct_evidence") or [])
    ds = Dataset("locomo")
    for conv_index, sample in enumerate(data):
        corpus = str(sample.get("sample_id") or f"conv-{conv_index}")
        conversation = sample["conversation"]
        docs: list[Doc] = []
        sessions = sorted((int(k.split("_")[1]), k) for k in conversation if re.fullmatch(r"session_\d+", k))
        for _, key in sessions:
            date = str(conversation.get(f"{key}_date_time", ""))
            for turn in conversation[key]:
                text = str(turn.get("text", "")).strip()
                caption = turn.get("blip_caption")
                if caption:
                    text = f"{text} [shares a photo: {caption}]".strip()
                if not text:
                    continue
                docs.append(Doc(turn["dia_id"], f"{turn['speaker']} ({date}): {text}", locomo_time(date)))
        ds.corpora[corpus] = docs
        for qa_index, qa in enumerate(sample.get("qa", [])):
            gold = evidence_ids(qa.get("evidence", []))
            if not gold:
                continue
            question = str(qa["question"]).strip()
            ds.queries.append(
                Query(
                    corpus,
                    question,
                    gold,
                    str(qa.get("category", "?")),
                    corrections.get(question),
                    qid=f"{corpus}#{qa_index}",
                )
            )
    return ds


def load_madial(directory: Path) -> Dataset:
    """MADial-Bench English: memories are the corpus; each dialogue up to its first test turn is a query."""
    ds = Dataset("madial")
    docs = []
    for line in (directory / "MADial-Bench-en-memory.json").read_text().splitlines():
        if not line.strip():
            continue
        for mid, rec in json.loads(line).items():
            emotion = str(rec.get("emotion", "")).lower()
            text = f"{rec['event']} ({rec.get('scene', '')}, feeling {emotion}, {rec['time']})"
            docs.append(Doc(str(mid), text, f"{rec['time']}T12:00:00Z" if rec.get("time") else None))
    ds.corpora["madial-en"] = docs
    for n, line in enumerate((directory / "MADial-Bench-en-dialogue.json").read_text().splitlines()):
        if not line.strip():
            continue
        rec = json.loads(line)
        first_test = min(rec["test-turn"])
        turns = [t.strip() for t in rec["dialogue"][:first_test] if t.strip() not in ("<BOD>", "<EOD>")]
        gold = {str(g) for g in rec["relevant-id"]}
        ds.queries.append(
            Query("madial-en", "\n".join(turns), gold, f"user-{rec.get('user-id')}", qid=str(n))
        )
    return ds


CROSSLINGUAL = Path(__file__).with_name("crosslingual") / "claims.jsonl"


def load_crosslingual(path: Path = CROSSLINGUAL) -> Dataset:
    """Claims in one language, questions about them in others (``crosslingual/README.md``); each
    question's category is ``<claim language>→<question language>``. Claims without questions are
    the distractors every question is ranked against."""
    ds = Dataset("crosslingual")
    docs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        docs.append(Doc(rec["id"], rec["claim"]))
        for lang, question in rec.get("questions", {}).items():
            ds.queries.append(
                Query("claims", question, {rec["id"]}, f"{rec['lang']}→{lang}", qid=f"{rec['id']}:{lang}")
            )
    ds.corpora["claims"] = docs
    return ds
