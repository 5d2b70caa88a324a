#!/usr/bin/env python3
"""Merges the symbol graphs of a module and the modules it re-exports into one graph for DocC.

`import Replica` gives an app ReplicaIndex's, ReplicaCore's and ReplicaEmbedding's public API too
(`@_exported import`), but each module's symbol graph holds only its own declarations. DocC documents
one module per catalog, so the library's pages would leave out SearchableIndex, AttributeSet and the
rest. This writes FIRST.symbols.json into OUTPUT with every symbol and relationship of the named
modules' graphs (and of their graphs of extensions to each other), under the first module's name.

  python3 scripts/merge-symbol-graphs.py GRAPHS_DIR OUTPUT_DIR Replica ReplicaIndex ReplicaCore ReplicaEmbedding
"""
import glob, json, os, sys

source, output, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
merged = json.load(open(os.path.join(source, modules[0] + ".symbols.json"), encoding="utf-8"))
symbols = {symbol["identifier"]["precise"] for symbol in merged["symbols"]}
relationships = {(r["source"], r["target"], r["kind"]) for r in merged["relationships"]}
files = [os.path.join(source, module + ".symbols.json") for module in modules[1:]]
for path in sorted(glob.glob(os.path.join(source, "*@*.symbols.json"))):
    extending, extended = os.path.basename(path)[:-len(".symbols.json")].split("@", 1)
    if extending in modules and extended in modules:
        files.append(path)
for path in files:
    graph = json.load(open(path, encoding="utf-8"))
    for symbol in graph["symbols"]:
        if symbol["identifier"]["precise"] not in symbols:
            symbols.add(symbol["identifier"]["precise"])
            merged["symbols"].append(symbol)
    for relationship in graph["relationships"]:
        key = (relationship["source"], relationship["target"], relationship["kind"])
        if key not in relationships:
            relationships.add(key)
            merged["relationships"].append(relationship)
os.makedirs(output, exist_ok=True)
json.dump(merged, open(os.path.join(output, modules[0] + ".symbols.json"), "w", encoding="utf-8"))
print(f"merge-symbol-graphs: {len(merged['symbols'])} symbols from {len(files) + 1} graphs")
