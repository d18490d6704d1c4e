"""The reviewers' web app: `incidents review serve` (FastAPI + Jinja2, rendered on the server)."""
