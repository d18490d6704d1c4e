"""The discovery side of the postmortem gate: URL and title cues, before a page is fetched.

The gate is one module, extractors/gate.py; this name stays for flows/discover.py.
"""

from __future__ import annotations

from extractors.gate import prefetch as gate

__all__ = ["gate"]
