"""Drives `replica mcp` with the official MCP Python client (`pip install mcp`).

Usage: python drive_replica_mcp.py REPLICA STORE_ARGUMENTS…
(what names the store, such as `--store DIR` or `--store DIR --database URL`)
Prints one JSON object with what the client saw; any failure to connect or call raises (non-zero exit).
"""
import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


async def main(replica: str, store: list[str]) -> None:
    server = StdioServerParameters(command=replica, args=[*store, "mcp", "--me", "Ada Lovelace,ada@example.com"])
    seen = {}
    async with Client(server, read_timeout_seconds=30) as client:
        seen["server"] = client.server_info.name if client.server_info else None
        seen["protocolVersion"] = client.protocol_version
        tools = await client.list_tools()
        seen["tools"] = [{"name": tool.name, "description": tool.description,
                          "properties": sorted((tool.input_schema or {}).get("properties", {}))} for tool in tools.tools]
        found = await client.call_tool("search", {"query": "launch", "filters": {"authors": ["me"]}})
        seen["found"] = {"isError": found.is_error, "text": found.content[0].text}
        refused = await client.call_tool("search", {"query": "launch", "stages": [{"stage": "count"}, {"stage": "sort"}]})
        seen["refused"] = {"isError": refused.is_error, "text": refused.content[0].text}
        try:
            await client.call_tool("no_such_tool", {})
            seen["unknownTool"] = None
        except MCPError as error:
            seen["unknownTool"] = error.error.code
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2:]))
