"""Held-out scoring: the suite, the statistics of a run, the contamination gate, results records and standings.

Modules: `suite`, `suite_build`, `suite_check` (the manifest, `arena suite add`, `arena suite check`), `statistics`
(pure numpy), `record` (per-item rewards → a version-2 record), `results` and `items` (reading and writing records),
`ranking` (standings across runs), `contamination` (the gate). See scoring/README.md.
"""
