#include "FTS5Postings.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *bytes;
    size_t count;
    size_t capacity;
} Buffer;

static int append(Buffer *buffer, const unsigned char *bytes, size_t count) {
    if (buffer->count + count > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->count + count) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (!grown) return SQLITE_NOMEM;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    if (count) memcpy(buffer->bytes + buffer->count, bytes, count);
    buffer->count += count;
    return SQLITE_OK;
}

// One word's items and weighted frequencies, as handed to replica_fts5_postings_word.
typedef struct {
    int64_t *items;
    int64_t *frequencies;
    int count;
    int capacity;
} Postings;

// Adds an item's occurrence of `weight`: to the last item when it is the same, else as a new item.
static int add(Postings *postings, int64_t item, int64_t weight) {
    if (postings->count > 0 && postings->items[postings->count - 1] == item) {
        postings->frequencies[postings->count - 1] += weight;
        return SQLITE_OK;
    }
    if (postings->count == postings->capacity) {
        int capacity = postings->capacity ? postings->capacity * 2 : 1024;
        int64_t *items = realloc(postings->items, sizeof(int64_t) * (size_t)capacity);
        if (!items) return SQLITE_NOMEM;
        postings->items = items;
        int64_t *frequencies = realloc(postings->frequencies, sizeof(int64_t) * (size_t)capacity);
        if (!frequencies) return SQLITE_NOMEM;
        postings->frequencies = frequencies;
        postings->capacity = capacity;
    }
    postings->items[postings->count] = item;
    postings->frequencies[postings->count] = weight;
    postings->count += 1;
    return SQLITE_OK;
}

// Hands `term`'s postings to `word` when at least `threshold` items hold it: SQLITE_ABORT when it stops.
static int hand_over(const Buffer *term, size_t skip, const Postings *postings, int threshold, replica_fts5_postings_word word,
                     void *context) {
    if (postings->count < threshold) return SQLITE_OK;
    return word(context, term->bytes + skip, (int)(term->count - skip), postings->items, postings->frequencies, postings->count) != 0
        ? SQLITE_ABORT : SQLITE_OK;
}

// Prepares `format` (one %s, for `table`) on `db`.
static int prepare(sqlite3 *db, const char *format, const char *table, sqlite3_stmt **statement) {
    char *sql = sqlite3_mprintf(format, table);
    if (!sql) return SQLITE_NOMEM;
    int rc = sqlite3_prepare_v2(db, sql, -1, statement, NULL);
    sqlite3_free(sql);
    return rc;
}

int replica_fts5_weighted_postings(sqlite3 *db, const char *vocabulary, const char *const *columns, const int64_t *weights,
                                   int columnCount, int threshold, replica_fts5_postings_word word, void *context) {
    sqlite3_stmt *statement = NULL;
    int rc = prepare(db, "SELECT term, doc, col FROM %s", vocabulary, &statement);
    if (rc != SQLITE_OK) return rc;
    int *columnBytes = calloc((size_t)(columnCount > 0 ? columnCount : 1), sizeof(int));
    if (!columnBytes) { sqlite3_finalize(statement); return SQLITE_NOMEM; }
    for (int index = 0; index < columnCount; index++) columnBytes[index] = (int)strlen(columns[index]);

    Buffer term = {0};
    Postings postings = {0};
    int started = 0;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        const unsigned char *rowTerm = sqlite3_column_text(statement, 0);
        size_t termBytes = (size_t)sqlite3_column_bytes(statement, 0);
        if (!started || termBytes != term.count || (termBytes && memcmp(rowTerm, term.bytes, termBytes) != 0)) {
            if (started && (rc = hand_over(&term, 0, &postings, threshold, word, context)) != SQLITE_OK) break;
            started = 1;
            postings.count = 0;
            term.count = 0;
            if ((rc = append(&term, rowTerm, termBytes)) != SQLITE_OK) break;
        }
        const unsigned char *column = sqlite3_column_text(statement, 2);
        int bytes = sqlite3_column_bytes(statement, 2);
        int64_t weight = 1;
        for (int index = 0; column && index < columnCount; index++) {
            if (columnBytes[index] == bytes && memcmp(columns[index], column, (size_t)bytes) == 0) {
                weight = weights[index];
                break;
            }
        }
        if ((rc = add(&postings, sqlite3_column_int64(statement, 1), weight)) != SQLITE_OK) break;
    }
    if (rc == SQLITE_DONE) rc = started ? hand_over(&term, 0, &postings, threshold, word, context) : SQLITE_OK;
    sqlite3_finalize(statement);
    free(columnBytes);
    free(term.bytes);
    free(postings.items);
    free(postings.frequencies);
    return rc;
}

// MARK: FTS5's own records

#define UNREADABLE REPLICA_FTS5_POSTINGS_UNREADABLE

// Reads an SQLite varint (FTS5 writes its numbers so: big-endian groups of 7 bits, the ninth byte
// whole) at `*at`, moving past it; 0 when it runs past `end`.
static int next_varint(const unsigned char **at, const unsigned char *end, uint64_t *value) {
    uint64_t result = 0;
    for (int index = 0; index < 9; index++) {
        if (*at + index >= end) return 0;
        unsigned char byte = (*at)[index];
        if (index == 8) {
            *value = (result << 8) | byte;
            *at += 9;
            return 1;
        }
        result = (result << 7) | (byte & 0x7f);
        if (!(byte & 0x80)) {
            *value = result;
            *at += index + 1;
            return 1;
        }
    }
    return 0;
}

// One word's doclist as read so far: its bytes from every page it spans, and where in them a page's
// first row id stands, written whole rather than as a difference from the one before (page format).
typedef struct {
    Buffer term;           // with FTS5's index byte first ('0' for the main index)
    Buffer doclist;
    size_t *absolute;      // offsets in `doclist`, ascending
    int absoluteCount;
    int absoluteCapacity;
    int open;              // a word's doclist is being read
} Reading;

static int note_absolute(Reading *reading, size_t offset) {
    if (reading->absoluteCount == reading->absoluteCapacity) {
        int capacity = reading->absoluteCapacity ? reading->absoluteCapacity * 2 : 64;
        size_t *grown = realloc(reading->absolute, sizeof(size_t) * (size_t)capacity);
        if (!grown) return SQLITE_NOMEM;
        reading->absolute = grown;
        reading->absoluteCapacity = capacity;
    }
    reading->absolute[reading->absoluteCount++] = offset;
    return SQLITE_OK;
}

// What a scan of the pages hands on: the weights by column, the threshold and where words go.
typedef struct {
    const int64_t *weights;
    int columnCount;
    int threshold;
    replica_fts5_postings_word word;
    void *context;
} Handing;

// Decodes the doclist read for the current word into `postings` and hands it over when the word is the
// main index's and is held by at least the threshold's items.
static int finish_word(Reading *reading, Postings *postings, const Handing *handing) {
    if (!reading->open) return SQLITE_OK;
    reading->open = 0;
    if (reading->term.count == 0) return UNREADABLE;
    const unsigned char *at = reading->doclist.bytes, *end = at + reading->doclist.count;
    postings->count = 0;
    int64_t rowid = 0;
    int absolute = 0;
    while (at < end) {
        size_t offset = (size_t)(at - reading->doclist.bytes);
        uint64_t value, header;
        if (!next_varint(&at, end, &value)) return UNREADABLE;
        while (absolute < reading->absoluteCount && reading->absolute[absolute] < offset) absolute++;
        if (offset == 0 || (absolute < reading->absoluteCount && reading->absolute[absolute] == offset)) {
            rowid = (int64_t)value;
        } else {
            if (value == 0) return UNREADABLE;   // row ids only grow
            rowid += (int64_t)value;
        }
        if (!next_varint(&at, end, &header)) return UNREADABLE;
        if (header & 1) return UNREADABLE;       // an entry marked deleted: not in an optimized segment
        const unsigned char *stop = at + (header >> 1);
        if (stop > end || stop < at) return UNREADABLE;
        int64_t frequency = 0;
        uint64_t column = 0;
        while (at < stop) {
            if (!next_varint(&at, stop, &value)) return UNREADABLE;
            if (value == 1) {                    // the next column's positions follow
                if (!next_varint(&at, stop, &column)) return UNREADABLE;
            } else {
                frequency += column < (uint64_t)handing->columnCount ? handing->weights[column] : 1;
            }
        }
        if (frequency == 0) return UNREADABLE;
        if (add(postings, rowid, frequency) != SQLITE_OK) return SQLITE_NOMEM;
    }
    if (postings->count == 0) return UNREADABLE;
    if (reading->term.bytes[0] != '0') return SQLITE_OK;
    return hand_over(&reading->term, 1, postings, handing->threshold, handing->word, handing->context);
}

// Reads one leaf page: the current word's doclist continued, then each word that begins on it. The
// footer holds each word's offset on the page, the first whole, the others from the one before.
static int read_page(Reading *reading, Postings *postings, const Handing *handing, const unsigned char *page, int size) {
    if (!page || size < 4) return UNREADABLE;
    int firstRowid = (page[0] << 8) | page[1];
    int footer = (page[2] << 8) | page[3];
    if (footer < 4 || footer > size || (firstRowid != 0 && (firstRowid < 4 || firstRowid >= footer))) return UNREADABLE;
    const unsigned char *index = page + footer, *indexEnd = page + size;
    uint64_t termOffset = (uint64_t)footer;
    int words = index < indexEnd;
    if (words && !next_varint(&index, indexEnd, &termOffset)) return UNREADABLE;
    if (termOffset < 4 || termOffset > (uint64_t)footer) return UNREADABLE;
    int rc;
    if (termOffset > 4) {
        if (!reading->open) return UNREADABLE;
        if (firstRowid != 0 && (rc = note_absolute(reading, reading->doclist.count + (size_t)(firstRowid - 4))) != SQLITE_OK) return rc;
        if ((rc = append(&reading->doclist, page + 4, (size_t)termOffset - 4)) != SQLITE_OK) return rc;
    } else if (firstRowid != 0) {
        return UNREADABLE;
    }
    for (int number = 0; words; number++) {
        if ((rc = finish_word(reading, postings, handing)) != SQLITE_OK) return rc;
        const unsigned char *at = page + termOffset, *end = page + footer;
        uint64_t shared = 0, fresh = 0;
        // A page's first word is written whole, the others as what they share with the word before.
        if ((number > 0 && !next_varint(&at, end, &shared)) || !next_varint(&at, end, &fresh)) return UNREADABLE;
        if (shared > reading->term.count || fresh > (uint64_t)(end - at)) return UNREADABLE;
        reading->term.count = (size_t)shared;
        if ((rc = append(&reading->term, at, (size_t)fresh)) != SQLITE_OK) return rc;
        at += fresh;
        uint64_t next = (uint64_t)footer;
        words = index < indexEnd;
        if (words) {
            uint64_t delta;
            if (!next_varint(&index, indexEnd, &delta) || delta == 0) return UNREADABLE;
            next = termOffset + delta;
            if (next > (uint64_t)footer) return UNREADABLE;
        }
        if (page + next < at) return UNREADABLE;
        reading->doclist.count = 0;
        reading->absoluteCount = 0;
        reading->open = 1;
        if ((rc = append(&reading->doclist, at, (size_t)(page + next - at))) != SQLITE_OK) return rc;
        termOffset = next;
    }
    return SQLITE_OK;
}

// The one segment of the index, from its structure record: its id and its first and last leaf pages.
static int read_structure(sqlite3 *db, const char *dataTable, int64_t *segment, int64_t *firstPage, int64_t *lastPage) {
    sqlite3_stmt *statement = NULL;
    int rc = prepare(db, "SELECT block FROM %s WHERE id = 10", dataTable, &statement);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(statement);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(statement);
        return rc == SQLITE_DONE ? UNREADABLE : rc;
    }
    const unsigned char *at = sqlite3_column_blob(statement, 0);
    const unsigned char *end = at + sqlite3_column_bytes(statement, 0);
    int result = UNREADABLE;
    uint64_t levels, segments, writes, merging, count, id, first, last;
    // 0xff after the configuration cookie: the V2 structure of contentless_delete tables.
    if (at && end - at > 4 && at[4] != 0xff && (at += 4) && next_varint(&at, end, &levels) && next_varint(&at, end, &segments) &&
        next_varint(&at, end, &writes) && segments == 1) {
        for (uint64_t level = 0; level < levels; level++) {
            if (!next_varint(&at, end, &merging) || !next_varint(&at, end, &count)) break;
            if (count == 0) continue;
            if (count != 1 || merging != 0) break;
            if (!next_varint(&at, end, &id) || !next_varint(&at, end, &first) || !next_varint(&at, end, &last)) break;
            if (id == 0 || first == 0 || last < first) break;
            *segment = (int64_t)id;
            *firstPage = (int64_t)first;
            *lastPage = (int64_t)last;
            result = SQLITE_OK;
            break;
        }
    }
    sqlite3_finalize(statement);
    return result;
}

int replica_fts5_segment_postings(sqlite3 *db, const char *dataTable, const int64_t *weights, int columnCount, int threshold,
                                  replica_fts5_postings_word word, void *context) {
    int64_t segment = 0, firstPage = 0, lastPage = 0;
    int rc = read_structure(db, dataTable, &segment, &firstPage, &lastPage);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt *statement = NULL;
    if ((rc = prepare(db, "SELECT id, block FROM %s WHERE id BETWEEN ?1 AND ?2 ORDER BY id", dataTable, &statement)) != SQLITE_OK) return rc;
    int64_t base = segment << 37;                // FTS5_SEGMENT_ROWID(segment, page)
    sqlite3_bind_int64(statement, 1, base + firstPage);
    sqlite3_bind_int64(statement, 2, base + lastPage);

    Handing handing = {weights, columnCount, threshold, word, context};
    Reading reading = {0};
    Postings postings = {0};
    int64_t expected = base + firstPage;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (sqlite3_column_int64(statement, 0) != expected++) {
            rc = UNREADABLE;
            break;
        }
        rc = read_page(&reading, &postings, &handing, sqlite3_column_blob(statement, 1), sqlite3_column_bytes(statement, 1));
        if (rc != SQLITE_OK) break;
    }
    if (rc == SQLITE_DONE) rc = expected == base + lastPage + 1 ? finish_word(&reading, &postings, &handing) : UNREADABLE;
    sqlite3_finalize(statement);
    free(reading.term.bytes);
    free(reading.doclist.bytes);
    free(reading.absolute);
    free(postings.items);
    free(postings.frequencies);
    return rc;
}
