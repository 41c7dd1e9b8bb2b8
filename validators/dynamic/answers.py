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
from typing import Any, Literal

from sandbox.workspace_files import WorkspaceFile

Answer = dict[str, WorkspaceFile]


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
    kind: Literal["csv", "json", "lines"]
    header: list[str] | None
    rows: list[Any]  # csv: lists of fields; json: entries (pairs for an object); lines: strings
    context: Any = None  # csv: (delimiter, line end); json: (root, where the records sit)

    def write(self, rows: list[Any]) -> bytes:
        """The file with `rows` in place of its records."""
        if self.kind == "csv":
            delimiter, end = self.context
            out = io.StringIO()
            writer = csv.writer(out, delimiter=delimiter, lineterminator=end)
            writer.writerows(([self.header] if self.header is not None else []) + rows)
            return out.getvalue().encode()
        if self.kind == "json":
            root, where = self.context
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
    object_entries = records.kind == "json" and records.context[1] == ()
    kinds = {"changed": ([*rows[:last], _changed_record(records, rows[last])], f"{where} changed"),
             "dropped": (rows[:last], f"{where} dropped")}
    if not object_entries:
        kinds["added"] = ([*rows, _changed_record(records, rows[last], every_field=True)],
                          f"{records.path}: a record added after record {last + 1}")
    return {kind: (_with(answer, records, changed), note) for kind, (changed, note) in kinds.items()}


def constant_answers(answers: dict[int, Answer]) -> tuple[dict[int, Answer], str, int]:
    """One constant answer shape for every instance, what it is, and the instance it is made from. It starts from the
    commonest whole answer (the lowest instance's on a tie); in each file whose records have fields (CSV rows,
    JSON objects or object entries), it lists this instance's records by their first field (the key, which the
    inputs give) with every other field at its commonest value over all instances: every row given the commonest
    label, nothing the oracle worked out."""
    counts = Counter(_fingerprint(a) for a in answers.values())
    best = max(counts.values())
    source = min(i for i, a in answers.items() if counts[_fingerprint(a)] == best)
    values = _commonest_values(answers)
    constant = {instance: _relabelled(answers[source], answer, values) for instance, answer in answers.items()}
    shown = list(values.items())[:4]
    if not shown:
        return constant, f"the oracle's answer of instance {source} on every instance", source
    labels = "; ".join(f"{path}: every {field!r} set to {value!r}" for (path, field), value in shown)
    more = f" and {len(values) - len(shown)} more field(s)" if len(values) > len(shown) else ""
    fielded = {path for path, _ in values}
    rest = set(answers[source]) - fielded or any(not path.lower().endswith((".csv", ".tsv")) for path in fielded)
    return constant, f"{labels}{more}" + (f"; the rest as instance {source}'s answer" if rest else ""), source


# -- records ---------------------------------------------------------------------------------------------------------

def _first_list(value: object, where: tuple[Any, ...]) -> tuple[Any, ...] | None:
    if isinstance(value, list) and value:
        return where
    children = value.items() if isinstance(value, dict) else ()
    for key, child in children:
        found = _first_list(child, (*where, key))
        if found is not None:
            return found
    return None


def _get(root: Any, where: tuple[Any, ...]) -> Any:
    for key in where:
        root = root[key]
    return root


def _put(root: Any, where: tuple[Any, ...], rows: list[Any]) -> Any:
    if not where:
        return dict(rows) if isinstance(root, dict) else rows
    copy = dict(root)
    copy[where[0]] = _put(copy[where[0]], where[1:], rows)
    return copy


def _with(answer: Answer, records: Records, rows: list[Any]) -> Answer:
    changed = dict(answer)
    changed[records.path] = replace(answer[records.path], data=records.write(rows))
    return changed


def _changed_record(records: Records, row: Any, every_field: bool = False) -> object:
    """The record with its values changed: every field but the first (a likely key) unless `every_field`."""
    if records.kind == "csv":
        fields = list(row)
        keep = 0 if every_field or len(fields) == 1 else 1
        return fields[:keep] + [_changed(f) for f in fields[keep:]]
    if records.kind == "json" and records.context[1] == ():
        key, value = row
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

def _fields(records: Records) -> list[tuple[str, list[Any]]]:
    """(field name, values) of every field of a file's records but the first (the key); none for plain records."""
    if records.kind == "csv" and records.header and len(records.header) > 1:
        width = len(records.header)
        return [(records.header[j], [r[j] for r in records.rows if len(r) == width]) for j in range(1, width)]
    if records.kind == "json" and records.context[1] == ():
        return [("(value)", [v for _, v in records.rows])]
    objects = [r for r in records.rows if isinstance(r, dict) and len(r) > 1]
    if records.kind == "json" and objects:
        keys = list(objects[0])
        return [(k, [r.get(k) for r in objects]) for k in keys[1:]]
    return []


def _commonest_values(answers: dict[int, Answer]) -> dict[tuple[str, str], object]:
    pooled: dict[tuple[str, str], list[str]] = {}
    for instance in sorted(answers):
        answer = answers[instance]
        for path in sorted(answer):
            records = read_records(path, answer[path].data)
            for field, values in _fields(records) if records else []:
                pooled.setdefault((path, field), []).extend(json.dumps(v, sort_keys=True) for v in values)
    return {key: json.loads(Counter(values).most_common(1)[0][0]) for key, values in pooled.items() if values}


def _relabelled(base: Answer, answer: Answer, values: dict[tuple[str, str], object]) -> Answer:
    """`base` with each file that has fielded records replaced by this answer's keys and the commonest values."""
    made = dict(base)
    for path in sorted(answer):
        wanted = {field: value for (p, field), value in values.items() if p == path}
        records = read_records(path, answer[path].data)
        if records is None or not wanted:
            continue
        rows: list[Any]
        if records.kind == "csv":
            header = records.header or []
            rows = [[wanted.get(header[j], v) if 0 < j < len(header) else v for j, v in enumerate(r)]
                    for r in records.rows]
        elif records.context[1] == ():
            rows = [[k, wanted["(value)"]] for k, _ in records.rows]
        else:  # entries of a JSON list: objects get the values, anything else stays
            rows = [{k: (wanted.get(k, v) if i > 0 else v) for i, (k, v) in enumerate(r.items())}
                    if isinstance(r, dict) else r for r in records.rows]
        into = read_records(path, base[path].data) if path in base else None
        writer = records
        if into is not None and into.kind == records.kind == "json" and into.context is not None and \
                records.context is not None and into.context[-1] == records.context[-1]:
            writer = into  # the base's file holds its records in the same place: its root is kept
        made[path] = replace(answer[path], data=writer.write(rows))
    return made


def _fingerprint(answer: Answer) -> tuple[tuple[str, bytes], ...]:
    return tuple(sorted((p, f.data) for p, f in answer.items()))
