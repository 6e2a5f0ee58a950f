"""Drives Lore's MCP server with the official Python SDK (PyPI `mcp`) and prints what it saw as JSON.

    python mcp_client.py http URL TOKEN ENTITY
    python mcp_client.py stdio LORE_BINARY DB OWNER ENTITY

It lists the tools, calls get_entity on ENTITY, and calls search when the server offers it.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def exercise(read, write, entity):
    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        names = [tool.name for tool in tools]
        report = {"tools": names}
        result = await session.call_tool("get_entity", {"entity": entity})
        report["get_entity"] = {
            "is_error": result.is_error,
            "structured": result.structured_content,
            "text": result.content[0].text if result.content else "",
        }
        if "search" in names:
            found = await session.call_tool("search", {"query": entity})
            report["search"] = {"is_error": found.is_error, "structured": found.structured_content}
        return report


async def main():
    mode = sys.argv[1]
    if mode == "http":
        url, token, entity = sys.argv[2:5]
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                report = await exercise(read, write, entity)
    elif mode == "stdio":
        binary, db, owner, entity = sys.argv[2:6]
        params = StdioServerParameters(command=binary, args=["--db", db, "--owner", owner, "mcp"])
        async with stdio_client(params) as (read, write):
            report = await exercise(read, write, entity)
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(report))


asyncio.run(main())
