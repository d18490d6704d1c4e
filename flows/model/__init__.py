"""Model-assisted drafting, the I/O part: the chat-completions client, the answer cache, and
refine_with_model, the one call the drafting paths make when INCIDENTS_LLM_BASE_URL is set."""

from __future__ import annotations

from flows.model.client import ChatClient, ModelUnavailable
from flows.model.refine import ModelReport, refine_with_model

__all__ = ["ChatClient", "ModelReport", "ModelUnavailable", "refine_with_model"]
