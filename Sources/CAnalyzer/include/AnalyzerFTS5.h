#ifndef REPLICA_ANALYZER_FTS5_H
#define REPLICA_ANALYZER_FTS5_H

#include <sqlite3.h>

// The analyzer as an FTS5 tokenizer named `replica` (`CREATE VIRTUAL TABLE … USING fts5(…, tokenize =
// 'replica')`): a document's words with the pairs of characters of its long Han, kana and Hangul words
// at their word's position (FTS5_TOKEN_COLOCATED), a query's words alone. With a language (`tokenize =
// 'replica de'`), each word's Snowball stem beside it, in documents and queries (where FTS5 takes
// colocated tokens as alternatives). A document's text analyzed ahead on another thread
// (replica_preanalysis_queue) is replayed rather than analyzed again. Registered through FTS5's API
// object of a connection (`replica_fts5_api` in CSQLite's shim), on each connection that opens an index.
int replica_fts5_register_analyzer(fts5_api *api);

#endif
