#ifndef REPLICA_FTS5_POSTINGS_H
#define REPLICA_FTS5_POSTINGS_H

#include <sqlite3.h>
#include <stdint.h>

// One word's postings: the items that hold it (ascending row ids) and, for each, the sum of the weights
// of the columns it occurs in, once per occurrence. Returns 0 to go on, anything else to stop the scan.
typedef int (*replica_fts5_postings_word)(void *context, const unsigned char *term, int termBytes, const int64_t *items,
                                          const int64_t *frequencies, int count);

// Reads every posting of an FTS5 table through an fts5vocab table of type `instance` (`vocabulary`,
// e.g. "temp.items_text_instances"), in term order, and hands each word held by at least `threshold`
// items to `word`. `columns` names the table's columns with their `weights`; a column not named weighs
// 1. What Swift would spend per occurrence (a string for the word, a lookup for the column) is done
// here on the bytes SQLite returns: the scan reads tens of millions of rows on a big index.
// Returns SQLITE_OK, SQLite's error code (the message is the connection's), or SQLITE_ABORT when `word`
// stopped it.
int replica_fts5_weighted_postings(sqlite3 *db, const char *vocabulary, const char *const *columns, const int64_t *weights,
                                   int columnCount, int threshold, replica_fts5_postings_word word, void *context);

// The same from the table's own records (`<table>_data`), when its index is one segment, as FTS5's
// 'optimize' leaves it: each leaf page read once, its doclists decoded here (SQLite 3.40's format,
// described in fts5_index.c), without the fts5vocab scan's SQL row for every occurrence. Returns
// REPLICA_FTS5_POSTINGS_UNREADABLE when the records are not as expected (several segments, another
// format, an entry marked deleted, anything that does not add up); `word` may have been called for
// some words by then, so the caller undoes what it did with them and reads them through fts5vocab.
#define REPLICA_FTS5_POSTINGS_UNREADABLE (-1)
int replica_fts5_segment_postings(sqlite3 *db, const char *dataTable, const int64_t *weights, int columnCount, int threshold,
                                  replica_fts5_postings_word word, void *context);

#endif
