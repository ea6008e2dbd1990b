"""The tools beside the pipeline: they read a publication or make test data, and the pipeline
imports none of them.

- `site/`: the static results site, built from a publication;
- `synthetic/`: `duplirank generate`, synthetic logs of every competition;
- `query.py`, `sandbox.py`: `duplirank sql`, the guarded read-only SQL session;
- `chart.py`, `report.py`, `score.py`: `duplirank chart`, the printed rankings, `duplirank score`.
"""
