#!/usr/bin/env bash
# Installs the official MCP Python client into .tools/mcp-venv, for the test that drives `replica mcp`
# with it (Tests/ReplicaCLITests/MCPTests.swift). Needs python3-venv (scripts/setup-system.sh) and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.tools/mcp-venv
if ! "$venv/bin/python3" -c "import mcp" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp>=2.3,<3"
    echo "installed the MCP client: $("$venv/bin/python3" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')"
fi
