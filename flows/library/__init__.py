"""The records library: search index, read-only JSON API and pages, MCP server, static site."""
