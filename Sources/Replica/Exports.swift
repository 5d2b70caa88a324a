// `import Replica` gives an app everything it uses: the index's types (items, attribute sets, queries,
// results) and the shared values (JSON, errors) come from the modules below, re-exported here.
@_exported import ReplicaCore
@_exported import ReplicaEmbedding
@_exported import ReplicaIndex
