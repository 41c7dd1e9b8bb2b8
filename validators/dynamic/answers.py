"""The oracle's answers as data, for the answer probes: what the oracle wrote, that answer one record off, and the
commonest answer shape as one constant answer for every instance.

An answer is every file the oracle created or changed in /workspace. A record is one unit of it: a row of a CSV or
TSV file (after its header), an entry of the first non-empty JSON list (else of the top JSON object), or a non-empty
line of any other text file.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, replace

from sandbox.workspace_files import WorkspaceFile

Answer = dict[str, WorkspaceFile]
MAX_LABELS = 12  # a column with more distinct values than this is data, not a label


def answer_of(initial: Answer | None, final: Answer | None) -> Answer | None:
    """The files the oracle created or changed; None when either workspace was not kept."""
    if initial is None or final is None:
        return None
    return {path: file for path, file in final.items() if initial.get(path) != file}


def same_answer(first: Answer, second: Answer) -> bool:
    """Whether two answers hold the same bytes under the same paths."""
    return {p: f.data for p, f in first.items()} == {p: f.data for p, f in second.items()}


@dataclass(frozen=True)
class Records:
    """One answer file read as records, and how to write records back."""

    path: str
    kind: str  # csv, json or lines
    header: list[str] | None
    rows: list  # csv: lists of fields; json: entries (pairs for an object); lines: strings
    context: object = None  # csv: (delimiter, line end); json: (root, where the records sit)

    def write(self, rows: list) -> bytes:
        """The file with `rows` in place of its records."""
        if self.kind == "csv":
            delimiter, end = self.context  # type: ignore[misc]
            out = io.StringIO()
            writer = csv.writer(out, delimiter=delimiter, lineterminator=end)
            writer.writerows(([self.header] if self.header is not None else []) + rows)
            return out.getvalue().encode()
        if self.kind == "json":
            root, where = self.context  # type: ignore[misc]
            return (json.dumps(_put(root, where, rows), indent=2) + "\n").encode()
        return "".join(f"{row}\n" for row in rows).encode()


def read_records(path: str, data: bytes) -> Records | None:
    """The file's records, or None when it holds none this module can read."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    lower = path.lower()
    if lower.endswith((".csv", ".tsv")):
        delimiter = "\t" if lower.endswith(".tsv") else ","
        rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if row]
        if len(rows) < 2:
            return None
        return Records(path, "csv", rows[0], rows[1:], (delimiter, "\r\n" if "\r\n" in text else "\n"))
    if lower.endswith(".json"):
        try:
            root = json.loads(text)
        except (ValueError, RecursionError):
            return None
        where = _first_list(root, ())
        if where is not None:
            return Records(path, "json", None, list(_get(root, where)), (root, where))
        if isinstance(root, dict) and root:
            return Records(path, "json", None, [list(pair) for pair in root.items()], (root, ()))
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    return Records(path, "lines", None, lines) if lines else None


def first_records(answer: Answer) -> Records | None:
    """The first answer file (by path) that holds records."""
    for path in sorted(answer):
        records = read_records(path, answer[path].data)
        if records is not None:
            return records
    return None


def near_misses(answer: Answer) -> dict[str, tuple[Answer, str]]:
    """The answer one record off, by kind (changed, dropped, added), each with a note of what was done. A JSON object's
    entries get no `added`: an extra key may rightly be ignored."""
    records = first_records(answer)
    if records is None:
        return {}
    rows, last = records.rows, len(records.rows) - 1
    where = f"{records.path}, record {last + 1} of {len(rows)}"
    object_entries = records.kind == "json" and records.context[1] == ()  # type: ignore[index]
    kinds = {"changed": ([*rows[:last], _changed_record(records, rows[last])], f"{where} changed"),
             "dropped": (rows[:last], f"{where} dropped")}
    if not object_entries:
        kinds["added"] = ([*rows, _changed_record(records, rows[last], every_field=True)],
                          f"{records.path}: a record added after record {last + 1}")
    return {kind: (_with(answer, records, changed), note) for kind, (changed, note) in kinds.items()}


def constant_answers(answers: dict[int, Answer]) -> tuple[dict[int, Answer], str]:
    """One constant answer shape for every instance, and what it is: where the answers share label-like fields (a CSV
    column or a JSON key, not the first, with few distinct values), each instance's answer with every such field set
    to its commonest value over all instances; else the commonest whole answer (the lowest instance's on a tie)."""
    labels = _commonest_labels(answers)
    if labels:
        described = "; ".join(f"{path}: every {field!r} set to {value!r}" for (path, field), value in labels.items())
        return {instance: _relabelled(answer, labels) for instance, answer in answers.items()}, described
    counts = Counter(_fingerprint(a) for a in answers.values())
    best = max(counts.values())
    source = min(i for i, a in answers.items() if counts[_fingerprint(a)] == best)
    return ({instance: answers[source] for instance in answers},
            f"the oracle's answer of instance {source} on every instance")


# -- records ---------------------------------------------------------------------------------------------------------

def _first_list(value: object, where: tuple) -> tuple | None:
    if isinstance(value, list) and value:
        return where
    children = value.items() if isinstance(value, dict) else ()
    for key, child in children:
        found = _first_list(child, (*where, key))
        if found is not None:
            return found
    return None


def _get(root: object, where: tuple) -> object:
    for key in where:
        root = root[key]  # type: ignore[index]
    return root


def _put(root: object, where: tuple, rows: list) -> object:
    if not where:
        return dict(rows) if isinstance(root, dict) else rows
    copy = dict(root)  # type: ignore[call-overload]
    copy[where[0]] = _put(copy[where[0]], where[1:], rows)
    return copy


def _with(answer: Answer, records: Records, rows: list) -> Answer:
    changed = dict(answer)
    changed[records.path] = replace(answer[records.path], data=records.write(rows))
    return changed


def _changed_record(records: Records, row: object, every_field: bool = False) -> object:
    """The record with its values changed: every field but the first (a likely key) unless `every_field`."""
    if records.kind == "csv":
        fields = list(row)  # type: ignore[call-overload]
        keep = 0 if every_field or len(fields) == 1 else 1
        return fields[:keep] + [_changed(f) for f in fields[keep:]]
    if records.kind == "json" and records.context[1] == ():  # type: ignore[index]
        key, value = row  # type: ignore[misc]
        return [f"{key}-x" if every_field else key, _changed(value)]
    if isinstance(row, dict) and row:
        keys = list(row)
        keep = 0 if every_field or len(keys) == 1 else 1
        return {k: (row[k] if i < keep else _changed(row[k])) for i, k in enumerate(keys)}
    return _changed(row)


def _changed(value: object) -> object:
    """A different value of the same shape: numbers plus one, text marked, truth flipped."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        stripped = value.strip()
        try:
            number = float(stripped)
        except ValueError:
            return f"{value}-x"
        if stripped.lstrip("+-").isdigit():
            return str(int(stripped) + 1)
        decimals = len(stripped.partition(".")[2])
        return f"{number + 1:.{decimals}f}"
    if isinstance(value, list):
        return [*value, _changed(value[-1]) if value else "x"]
    if isinstance(value, dict):
        return {k: _changed(v) for k, v in value.items()} if value else {"x": 1}
    return "x"


# -- the constant answer ---------------------------------------------------------------------------------------------

def _fields(records: Records) -> list[tuple[str, list]]:
    """(field name, values) of a file's label candidates: every column or key but the first."""
    if records.kind == "csv" and records.header:
        width = len(records.header)
        return [(records.header[j], [r[j] for r in records.rows if len(r) == width]) for j in range(1, width)]
    if records.kind == "json" and records.context[1] == ():  # type: ignore[index]
        return [("(value)", [v for _, v in records.rows])]
    if records.kind == "json" and all(isinstance(r, dict) for r in records.rows):
        keys = list(records.rows[0]) if records.rows else []
        return [(k, [r.get(k) for r in records.rows]) for k in keys[1:]]
    return []


def _commonest_labels(answers: dict[int, Answer]) -> dict[tuple[str, str], object]:
    pooled: dict[tuple[str, str], list] = {}
    for answer in answers.values():
        for path in sorted(answer):
            records = read_records(path, answer[path].data)
            for field, values in _fields(records) if records else []:
                pooled.setdefault((path, field), []).extend(json.dumps(v, sort_keys=True) for v in values)
    labels = {}
    for key, values in pooled.items():
        counts = Counter(values)
        if 1 < len(counts) <= MAX_LABELS and len(counts) * 2 <= len(values):
            labels[key] = json.loads(counts.most_common(1)[0][0])
    return labels


def _relabelled(answer: Answer, labels: dict[tuple[str, str], object]) -> Answer:
    relabelled = dict(answer)
    for path in sorted(answer):
        records = read_records(path, answer[path].data)
        wanted = {field: value for (p, field), value in labels.items() if p == path}
        if records is None or not wanted:
            continue
        if records.kind == "csv":
            columns = [j for j, name in enumerate(records.header or []) if name in wanted and j > 0]
            rows = [[wanted[records.header[j]] if j in columns else v  # type: ignore[index]
                     for j, v in enumerate(r)] for r in records.rows]
        elif records.context[1] == ():  # type: ignore[index]
            rows = [[k, wanted["(value)"]] for k, _ in records.rows]
        else:  # entries of a JSON list: objects get the labels, anything else stays
            rows = [{k: (wanted[k] if k in wanted and i > 0 else v) for i, (k, v) in enumerate(r.items())}
                    if isinstance(r, dict) else r for r in records.rows]
        relabelled[path] = replace(answer[path], data=records.write(rows))
    return relabelled


def _fingerprint(answer: Answer) -> tuple:
    return tuple(sorted((p, f.data) for p, f in answer.items()))
