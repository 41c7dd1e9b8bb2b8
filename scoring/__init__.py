"""Held-out scoring: the suite, the statistics of a run, the contamination gate, results records and standings.

Modules: `suite` (the manifest), `statistics` (pure numpy), `record` (per-item rewards → a version-2 record),
`results` and `items` (reading and writing records), `ranking` (standings across runs), `contamination` (the gate).
"""
