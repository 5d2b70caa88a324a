#!/usr/bin/env python3
"""Merges the symbol graphs of a module and the modules it re-exports into one graph for DocC.

`import Replica` gives an app ReplicaIndex's, ReplicaCore's and ReplicaEmbedding's public API too
(`@_exported import`), but each module's symbol graph holds only its own declarations. DocC documents
one module per catalog, so the library's pages would leave out SearchableIndex, AttributeSet and the
rest. This writes FIRST.symbols.json into OUTPUT with every symbol and relationship of the named
modules' graphs (and of their graphs of extensions to each other), under the first module's name; their
extensions of outside modules (FIRST@Swift and the like) are merged likewise, one graph per module
extended.

  python3 scripts/merge-symbol-graphs.py GRAPHS_DIR OUTPUT_DIR Replica ReplicaIndex ReplicaCore ReplicaEmbedding
"""
import glob, json, os, sys

source, output, modules = sys.argv[1], sys.argv[2], sys.argv[3:]


def merge(paths):
    """One graph of every symbol and relationship in `paths`, the first graph's metadata kept."""
    merged, symbols, relationships = None, set(), set()
    for path in paths:
        graph = json.load(open(path, encoding="utf-8"))
        if merged is None:
            merged = dict(graph, symbols=[], relationships=[])
            merged["module"] = dict(graph["module"], name=modules[0])
        for symbol in graph["symbols"]:
            if symbol["identifier"]["precise"] not in symbols:
                symbols.add(symbol["identifier"]["precise"])
                merged["symbols"].append(symbol)
        for relationship in graph["relationships"]:
            key = (relationship["source"], relationship["target"], relationship["kind"])
            if key not in relationships:
                relationships.add(key)
                merged["relationships"].append(relationship)
    return merged


own = [os.path.join(source, module + ".symbols.json") for module in modules]
outside = {}
for path in sorted(glob.glob(os.path.join(source, "*@*.symbols.json"))):
    extending, extended = os.path.basename(path)[:-len(".symbols.json")].split("@", 1)
    if extending not in modules:
        continue
    if extended in modules:
        own.append(path)
    else:
        outside.setdefault(extended, []).append(path)
os.makedirs(output, exist_ok=True)
graphs = [(modules[0] + ".symbols.json", merge(own))]
graphs += [(f"{modules[0]}@{extended}.symbols.json", merge(paths)) for extended, paths in sorted(outside.items())]
for name, graph in graphs:
    json.dump(graph, open(os.path.join(output, name), "w", encoding="utf-8"))
print(f"merge-symbol-graphs: {len(graphs[0][1]['symbols'])} symbols from {len(own)} graphs, "
      f"{len(outside)} graph(s) of extensions to other modules")
