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
TOOLS = {"search_incidents", "get_incident", "get_topic", "vocab"}


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
            listing = await client.list_tools()
            tools = listing.tools
            seen["tools_bytes"] = len(listing.model_dump_json(by_alias=True, exclude_none=True))
            seen["tools"] = {tool.name: tool for tool in tools}

            async def call(name: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(name, arguments)

            seen["by_component"] = await call("search_incidents", {"component": ["node-image"]})
            seen["by_word_ko"] = await call("search_incidents", {"query": "커널"})
            seen["by_word_ja"] = await call("search_incidents", {"query": "不具合", "lang": "ja"})
            seen["incident"] = await call("get_incident", {"id": "IL-0101"})
            seen["listed"] = await call("search_incidents", {})
            seen["by_label_ko"] = await call("search_incidents", {"query": "인증서"})
            seen["by_label_ja"] = await call("search_incidents", {"query": "証明書"})
            seen["topic"] = await call("get_topic", {"kind": "component", "term": "kubelet"})
            seen["vocab"] = await call("vocab", {"kind": "component"})
            # Bad arguments: each a tool error, and the server answers on.
            seen["bad_term"] = await call("search_incidents", {"component": ["node"]})
            seen["bad_type"] = await call("search_incidents", {"page": "first"})
            seen["bad_id"] = await call("get_incident", {"id": "IL-9999"})
            seen["bad_id_shape"] = await call("get_incident", {"id": "../../etc/passwd"})
            seen["bad_kind"] = await call("get_topic", {"kind": "colour", "term": "red"})
            seen["bad_topic_term"] = await call("get_topic", {"kind": "component", "term": "toaster"})
            # Unknown or misspelt arguments: tool errors naming the valid ones, never silently dropped.
            seen["unknown_q"] = await call("search_incidents", {"q": "kubelet"})
            seen["unknown_limit"] = await call("search_incidents", {"limit": 2})
            seen["unknown_bogus"] = await call("search_incidents", {"bogus": 1})
            seen["misspelt"] = await call("get_topic", {"kind": "component", "trem": "kubelet"})
            seen["page_size"] = await call("search_incidents", {"page_size": 2})
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
    for tool in tools.values():
        # Every parameter described; arguments the tool does not take are refused.
        assert tool.input_schema.get("additionalProperties") is False, tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"
        assert "page_size" not in tool.input_schema["properties"]  # one page size: 20
    component = tools["search_incidents"].input_schema["properties"]["component"]
    assert "vocab tool" in component["description"]
    assert seen["tools_bytes"] < 24_000  # was 39 KB with every vocabulary inlined

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
    assert listed["total"] == 5 and listed["page_size"] == 20
    assert [i["id"] for i in listed["items"]][:2] == ["IL-0042", "IL-0102"]  # newest first
    for name in ("by_label_ko", "by_label_ja"):  # the vocabulary's labels: IL-0042 is expired-certificate
        assert [i["id"] for i in seen[name].structured_content["items"]] == ["IL-0042"], name

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
    for name, wrong, hint in [
        ("unknown_q", "'q'", "did you mean 'query'?"),
        ("unknown_limit", "'limit'", ""),
        ("unknown_bogus", "'bogus'", ""),
        ("misspelt", "'trem'", "did you mean 'term'?"),
        ("page_size", "'page_size'", "did you mean 'page'?"),
    ]:
        result = seen[name]
        assert result.is_error, name
        text = result.content[0].text
        assert f"does not take {wrong}" in text and hint in text, text
        assert "its arguments are:" in text
    assert "IL-9999" in seen["bad_id"].content[0].text
    assert not seen["after"].is_error  # still answering
    assert seen["after"].structured_content["record"]["org"] == "Larkspur"
