"""The chat-completions call over httpx: retries on 429/5xx with backoff and Retry-After,
timeouts, and response_format json_schema with a fallback to json_object.

httpx rather than the `openai` client: httpx is a dependency already, the protocol is one POST,
and we need its details in hand (Retry-After, a server that rejects json_schema, usage figures)
rather than behind another retry layer of the SDK's own."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from flows.fetch.retry import backoff_delay, parse_retry_after
from flows.settings import Settings
from schema.errors import IngestError

log = logging.getLogger(__name__)

# 500 too: model servers answer 500 to an overloaded moment (llama.cpp, vLLM) as often as 503.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ModelUnavailable(IngestError):
    """The model endpoint is down, too slow, refuses us, or speaks something else: the rule-based
    draft stands. The message names the cause, never the API key."""


@dataclass(frozen=True)
class Reply:
    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    retries: int


class ChatClient:
    """One endpoint and model; `json_schema` turns False once the server refuses it."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        headers = {"Accept": "application/json"}
        key = settings.llm_api_key.get_secret_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.settings = settings
        self.model = settings.llm_model
        self.json_schema = True
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=settings.llm_base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(settings.llm_timeout, connect=settings.llm_connect_timeout),
            transport=transport,
            trust_env=False,  # a local endpoint must not go through a proxy from the environment
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _body(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.settings.llm_max_tokens,
        }
        if self.json_schema:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "incident_draft", "strict": True, "schema": schema},
            }
        else:
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        *,
        messages_with_schema: list[dict[str, str]] | None = None,
    ) -> Reply:
        """One answer. `messages_with_schema`: what to send in json_object mode (the schema spelled
        out in the prompt). ModelUnavailable when no answer can be had."""
        retries = 0
        connect_failures = 0
        while True:
            sent = messages if self.json_schema else (messages_with_schema or messages)
            try:
                response = self._http.post("chat/completions", json=self._body(sent, schema))
            except httpx.ConnectError as exc:
                # One more try (a server restarting); a down endpoint must not hold every draft.
                connect_failures += 1
                if connect_failures > 1:
                    raise ModelUnavailable(f"the model endpoint is down ({_why(exc)})") from exc
                self._sleep(
                    backoff_delay(0, self.settings.llm_retry_backoff, self.settings.llm_max_retry_after)
                )
                continue
            except httpx.TimeoutException as exc:
                # Not retried: a slow server would be as slow again, and every draft waits on it.
                raise ModelUnavailable(
                    f"the model endpoint did not answer in time ({type(exc).__name__}, "
                    f"limit {self.settings.llm_timeout:g} s)"
                ) from exc
            except httpx.HTTPError as exc:
                raise ModelUnavailable(f"the model request failed ({_why(exc)})") from exc
            if response.status_code in (400, 422) and self.json_schema:
                # The server lacks json_schema (or this schema): json_object plus our own validation.
                log.info("the model endpoint refused response_format json_schema; using json_object")
                self.json_schema = False
                continue
            if response.status_code in RETRY_STATUSES and retries < self.settings.llm_max_retries:
                wait = parse_retry_after(response.headers.get("Retry-After"))
                if wait is not None and wait > self.settings.llm_max_retry_after:
                    raise ModelUnavailable(
                        f"the model endpoint answered {response.status_code} and asks to wait {wait:.0f} s"
                    )
                if wait is None:
                    wait = backoff_delay(
                        retries, self.settings.llm_retry_backoff, self.settings.llm_max_retry_after
                    )
                retries += 1
                self._sleep(wait)
                continue
            if response.status_code != 200:
                raise ModelUnavailable(_status_reason(response, retries))
            return _reply(response, retries)


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _status_reason(response: httpx.Response, retries: int) -> str:
    after = f" after {retries} retries" if retries else ""
    if response.status_code in (401, 403):
        return f"the model endpoint refused the API key ({response.status_code})"
    if response.status_code == 404:
        return "the model endpoint has no chat/completions or no such model (404): check base URL and model"
    return f"the model endpoint answered {response.status_code}{after}"


def _reply(response: httpx.Response, retries: int) -> Reply:
    try:
        data = response.json()
        choice = data["choices"][0]
        content = choice["message"].get("content")
        usage = data.get("usage") or {}
    except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModelUnavailable("the model endpoint's reply is not a chat completion") from exc
    return Reply(
        content=content if isinstance(content, str) else None,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        retries=retries,
    )
