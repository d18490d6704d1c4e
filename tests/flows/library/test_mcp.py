"""`incidents mcp` through the official SDK's client, over a real stdio subprocess."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from flows.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
TOOLS = {"search_incidents", "get_incident", "list_incidents", "get_topic", "vocab"}


def _server(settings: Settings) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "flows", "mcp", "--data-dir", str(settings.data_dir)],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )


def _session(settings: Settings) -> dict[str, Any]:
    """Everything the test checks, gathered in one client session (one subprocess start)."""
    seen: dict[str, Any] = {}

    async def talk() -> None:
        with anyio.fail_after(60):
            await session()

    async def session() -> None:
        async with Client(_server(settings)) as client:
            tools = (await client.list_tools()).tools
            seen["tools"] = {tool.name: tool for tool in tools}

            async def call(name: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(name, arguments)

            seen["by_component"] = await call("search_incidents", {"component": ["node-image"]})
            seen["by_word_ko"] = await call("search_incidents", {"query": "커널"})
            seen["by_word_ja"] = await call("search_incidents", {"query": "不具合", "lang": "ja"})
            seen["incident"] = await call("get_incident", {"id": "IL-0101"})
            seen["listed"] = await call("list_incidents", {"page_size": 2})
            seen["topic"] = await call("get_topic", {"kind": "component", "term": "kubelet"})
            seen["vocab"] = await call("vocab", {"kind": "component"})
            # Bad arguments: each a tool error, and the server answers on.
            seen["bad_term"] = await call("search_incidents", {"component": ["node"]})
            seen["bad_type"] = await call("search_incidents", {"page": "first"})
            seen["bad_id"] = await call("get_incident", {"id": "IL-9999"})
            seen["bad_id_shape"] = await call("get_incident", {"id": "../../etc/passwd"})
            seen["bad_kind"] = await call("get_topic", {"kind": "colour", "term": "red"})
            seen["bad_topic_term"] = await call("get_topic", {"kind": "component", "term": "toaster"})
            seen["after"] = await call("get_incident", {"id": "IL-0042"})

    anyio.run(talk)
    return seen


def test_a_curator_asks_an_mcp_client_for_incidents_involving_a_component(library_settings: Settings) -> None:
    seen = _session(library_settings)

    tools = seen["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None  # structured results
        assert tool.description
    component = tools["search_incidents"].input_schema["properties"]["component"]
    assert "node-image" in str(component)  # the vocabulary is in the schema: a client can pick terms

    found = seen["by_component"]
    assert not found.is_error
    items = found.structured_content["items"]
    assert [item["id"] for item in items] == ["IL-0102", "IL-0101"]
    assert items[1]["sources"][0]["url"] == "https://tech.nimbus.example/ko/2024/ami-rollover"
    assert found.structured_content["facets"]["component"]

    assert [i["id"] for i in seen["by_word_ko"].structured_content["items"]] == ["IL-0101"]
    assert [i["id"] for i in seen["by_word_ja"].structured_content["items"]] == ["IL-0102"]

    incident = seen["incident"].structured_content
    assert incident["record"]["id"] == "IL-0101"
    assert incident["record"]["sources"][0]["url"].startswith("https://tech.nimbus.example/")
    assert [r["id"] for r in incident["related"]] == ["IL-0102", "IL-0103"]
    assert incident["related"][0]["why"]

    listed = seen["listed"].structured_content
    assert listed["total"] == 5 and [i["id"] for i in listed["items"]] == ["IL-0042", "IL-0102"]

    topic = seen["topic"].structured_content
    assert [i["id"] for i in topic["items"]] == ["IL-0101", "IL-0103"]
    assert topic["labels"]["ko"]

    terms = seen["vocab"].structured_content["kinds"]["component"]
    kubelet = next(t for t in terms if t["term"] == "kubelet")
    assert kubelet["labels"]["en"] and kubelet["labels"]["ko"]

    for name in ("bad_term", "bad_type", "bad_id", "bad_id_shape", "bad_kind", "bad_topic_term"):
        result = seen[name]
        assert result.is_error, name
        assert result.content[0].text, name
    assert "did you mean node-image" in seen["bad_term"].content[0].text
    assert "IL-9999" in seen["bad_id"].content[0].text
    assert not seen["after"].is_error  # still answering
    assert seen["after"].structured_content["record"]["org"] == "Larkspur"
