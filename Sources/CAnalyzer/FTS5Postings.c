#include "FTS5Postings.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t *items;
    int64_t *frequencies;
    int count;
    int capacity;
    unsigned char *term;
    int termBytes;
    int termCapacity;
} Postings;

static int grow(Postings *postings) {
    int capacity = postings->capacity ? postings->capacity * 2 : 1024;
    int64_t *items = realloc(postings->items, sizeof(int64_t) * (size_t)capacity);
    if (!items) return SQLITE_NOMEM;
    postings->items = items;
    int64_t *frequencies = realloc(postings->frequencies, sizeof(int64_t) * (size_t)capacity);
    if (!frequencies) return SQLITE_NOMEM;
    postings->frequencies = frequencies;
    postings->capacity = capacity;
    return SQLITE_OK;
}

static int set_term(Postings *postings, const unsigned char *term, int bytes) {
    if (bytes > postings->termCapacity) {
        int capacity = bytes < 64 ? 64 : bytes * 2;
        unsigned char *grown = realloc(postings->term, (size_t)capacity);
        if (!grown) return SQLITE_NOMEM;
        postings->term = grown;
        postings->termCapacity = capacity;
    }
    if (bytes > 0) memcpy(postings->term, term, (size_t)bytes);
    postings->termBytes = bytes;
    return SQLITE_OK;
}

int replica_fts5_weighted_postings(sqlite3 *db, const char *vocabulary, const char *const *columns, const int64_t *weights,
                                   int columnCount, int threshold, replica_fts5_postings_word word, void *context) {
    char *sql = sqlite3_mprintf("SELECT term, doc, col FROM %s", vocabulary);
    if (!sql) return SQLITE_NOMEM;
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &statement, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return rc;

    int *columnBytes = calloc((size_t)(columnCount > 0 ? columnCount : 1), sizeof(int));
    if (!columnBytes) { sqlite3_finalize(statement); return SQLITE_NOMEM; }
    for (int index = 0; index < columnCount; index++) columnBytes[index] = (int)strlen(columns[index]);

    Postings postings = {0};
    int started = 0;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        const unsigned char *term = sqlite3_column_text(statement, 0);
        int termBytes = sqlite3_column_bytes(statement, 0);
        if (!term) term = (const unsigned char *)"";
        if (!started || termBytes != postings.termBytes || memcmp(term, postings.term, (size_t)termBytes) != 0) {
            if (started && postings.count >= threshold &&
                word(context, postings.term, postings.termBytes, postings.items, postings.frequencies, postings.count) != 0) {
                rc = SQLITE_ABORT;
                break;
            }
            started = 1;
            postings.count = 0;
            if ((rc = set_term(&postings, term, termBytes)) != SQLITE_OK) break;
        }
        int64_t item = sqlite3_column_int64(statement, 1);
        const unsigned char *column = sqlite3_column_text(statement, 2);
        int bytes = sqlite3_column_bytes(statement, 2);
        int64_t weight = 1;
        for (int index = 0; column && index < columnCount; index++) {
            if (columnBytes[index] == bytes && memcmp(columns[index], column, (size_t)bytes) == 0) {
                weight = weights[index];
                break;
            }
        }
        if (postings.count > 0 && postings.items[postings.count - 1] == item) {
            postings.frequencies[postings.count - 1] += weight;
        } else {
            if (postings.count == postings.capacity && (rc = grow(&postings)) != SQLITE_OK) break;
            postings.items[postings.count] = item;
            postings.frequencies[postings.count] = weight;
            postings.count += 1;
        }
    }
    if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
        if (started && postings.count >= threshold &&
            word(context, postings.term, postings.termBytes, postings.items, postings.frequencies, postings.count) != 0) {
            rc = SQLITE_ABORT;
        }
    }
    sqlite3_finalize(statement);
    free(columnBytes);
    free(postings.items);
    free(postings.frequencies);
    free(postings.term);
    return rc;
}

// MARK: FTS5's own records

#define UNREADABLE REPLICA_FTS5_POSTINGS_UNREADABLE

// An SQLite varint (FTS5 writes its numbers so): big-endian groups of 7 bits, the ninth byte whole.
// Returns the bytes read, 0 when it runs past `end`.
static int get_varint(const unsigned char *at, const unsigned char *end, uint64_t *value) {
    uint64_t result = 0;
    for (int index = 0; index < 9; index++) {
        if (at + index >= end) return 0;
        unsigned char byte = at[index];
        if (index == 8) {
            *value = (result << 8) | byte;
            return 9;
        }
        result = (result << 7) | (byte & 0x7f);
        if (!(byte & 0x80)) {
            *value = result;
            return index + 1;
        }
    }
    return 0;
}

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

// Decodes the doclist read for the current word into `postings` and hands it over when the word is the
// main index's and is held by at least `threshold` items.
static int finish_word(Reading *reading, Postings *postings, const int64_t *weights, int columnCount, int threshold,
                       replica_fts5_postings_word word, void *context) {
    if (!reading->open) return SQLITE_OK;
    reading->open = 0;
    if (reading->term.count == 0) return UNREADABLE;
    const unsigned char *at = reading->doclist.bytes, *end = at + reading->doclist.count;
    postings->count = 0;
    int64_t rowid = 0;
    int absolute = 0;
    int first = 1;
    while (at < end) {
        size_t offset = (size_t)(at - reading->doclist.bytes);
        uint64_t value;
        int read = get_varint(at, end, &value);
        if (!read) return UNREADABLE;
        at += read;
        while (absolute < reading->absoluteCount && reading->absolute[absolute] < offset) absolute++;
        if (first || (absolute < reading->absoluteCount && reading->absolute[absolute] == offset)) {
            rowid = (int64_t)value;
        } else {
            if (value == 0) return UNREADABLE;   // row ids only grow
            rowid += (int64_t)value;
        }
        first = 0;
        uint64_t header;
        if (!(read = get_varint(at, end, &header))) return UNREADABLE;
        at += read;
        if (header & 1) return UNREADABLE;       // an entry marked deleted: not in an optimized segment
        const unsigned char *positions = at, *stop = at + (header >> 1);
        if (stop > end || stop < at) return UNREADABLE;
        int64_t frequency = 0;
        uint64_t column = 0;
        while (positions < stop) {
            if (!(read = get_varint(positions, stop, &value))) return UNREADABLE;
            positions += read;
            if (value == 1) {                    // the next column's positions follow
                if (!(read = get_varint(positions, stop, &column))) return UNREADABLE;
                positions += read;
            } else {
                frequency += column < (uint64_t)columnCount ? weights[column] : 1;
            }
        }
        at = stop;
        if (frequency == 0) return UNREADABLE;
        if (postings->count == postings->capacity && grow(postings) != SQLITE_OK) return SQLITE_NOMEM;
        postings->items[postings->count] = rowid;
        postings->frequencies[postings->count] = frequency;
        postings->count += 1;
    }
    if (postings->count == 0) return UNREADABLE;
    if (reading->term.bytes[0] != '0' || postings->count < threshold) return SQLITE_OK;
    if (word(context, reading->term.bytes + 1, (int)reading->term.count - 1, postings->items, postings->frequencies, postings->count) != 0) {
        return SQLITE_ABORT;
    }
    return SQLITE_OK;
}

// The one segment of the index, from its structure record: its id and its first and last leaf pages.
static int read_structure(sqlite3 *db, const char *dataTable, int64_t *segment, int64_t *firstPage, int64_t *lastPage) {
    char *sql = sqlite3_mprintf("SELECT block FROM %s WHERE id = 10", dataTable);
    if (!sql) return SQLITE_NOMEM;
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &statement, NULL);
    sqlite3_free(sql);
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
    int read;
    if (at && end - at > 4 && at[4] != 0xff) {  // 0xff: the V2 structure of contentless_delete tables
        at += 4;                                 // the configuration cookie
        if ((read = get_varint(at, end, &levels)) && (at += read) && (read = get_varint(at, end, &segments)) && (at += read) &&
            (read = get_varint(at, end, &writes)) && (at += read) && segments == 1) {
            for (uint64_t level = 0; level < levels; level++) {
                if (!(read = get_varint(at, end, &merging))) break;
                at += read;
                if (!(read = get_varint(at, end, &count))) break;
                at += read;
                if (count == 0) continue;
                if (count != 1 || merging != 0) break;
                if (!(read = get_varint(at, end, &id))) break;
                at += read;
                if (!(read = get_varint(at, end, &first))) break;
                at += read;
                if (!(read = get_varint(at, end, &last))) break;
                at += read;
                if (id == 0 || first == 0 || last < first) break;
                *segment = (int64_t)id;
                *firstPage = (int64_t)first;
                *lastPage = (int64_t)last;
                result = SQLITE_OK;
                break;
            }
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
    char *sql = sqlite3_mprintf("SELECT id, block FROM %s WHERE id BETWEEN ?1 AND ?2 ORDER BY id", dataTable);
    if (!sql) return SQLITE_NOMEM;
    sqlite3_stmt *statement = NULL;
    rc = sqlite3_prepare_v2(db, sql, -1, &statement, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return rc;
    int64_t base = segment << 37;                // FTS5_SEGMENT_ROWID(segment, page)
    sqlite3_bind_int64(statement, 1, base + firstPage);
    sqlite3_bind_int64(statement, 2, base + lastPage);

    Reading reading = {0};
    Postings postings = {0};
    int64_t expected = base + firstPage;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        rc = UNREADABLE;
        if (sqlite3_column_int64(statement, 0) != expected++) break;
        const unsigned char *page = sqlite3_column_blob(statement, 1);
        int size = sqlite3_column_bytes(statement, 1);
        if (!page || size < 4) break;
        int firstRowid = (page[0] << 8) | page[1];
        int footer = (page[2] << 8) | page[3];
        if (footer < 4 || footer > size || (firstRowid != 0 && (firstRowid < 4 || firstRowid >= footer))) break;
        // The footer: each word's offset on the page, the first whole, the others from the one before.
        const unsigned char *index = page + footer, *indexEnd = page + size;
        uint64_t termOffset = 0;
        int read = 0;
        int terms = index < indexEnd;
        if (terms) {
            if (!(read = get_varint(index, indexEnd, &termOffset))) break;
            index += read;
        }
        uint64_t continuationEnd = terms ? termOffset : (uint64_t)footer;
        if (continuationEnd < 4 || continuationEnd > (uint64_t)footer) break;
        // Before the first word: the current word's doclist, continued.
        if (continuationEnd > 4) {
            if (!reading.open) break;
            if (firstRowid != 0 && (rc = note_absolute(&reading, reading.doclist.count + (size_t)(firstRowid - 4))) != SQLITE_OK) break;
            if ((rc = append(&reading.doclist, page + 4, (size_t)continuationEnd - 4)) != SQLITE_OK) break;
            rc = UNREADABLE;
        } else if (firstRowid != 0) {
            break;
        }
        int failed = 0;
        for (int number = 0; terms; number++) {
            if ((rc = finish_word(&reading, &postings, weights, columnCount, threshold, word, context)) != SQLITE_OK) {
                failed = 1;
                break;
            }
            rc = UNREADABLE;
            const unsigned char *at = page + termOffset, *end = page + footer;
            uint64_t shared = 0, fresh = 0;
            if (number == 0) {                   // a page's first word is written whole
                if (!(read = get_varint(at, end, &fresh))) { failed = 1; break; }
            } else {
                if (!(read = get_varint(at, end, &shared))) { failed = 1; break; }
                at += read;
                if (!(read = get_varint(at, end, &fresh))) { failed = 1; break; }
            }
            at += read;
            if (shared > reading.term.count || fresh > (uint64_t)(end - at)) { failed = 1; break; }
            reading.term.count = (size_t)shared;
            if (append(&reading.term, at, (size_t)fresh) != SQLITE_OK) { rc = SQLITE_NOMEM; failed = 1; break; }
            at += fresh;
            uint64_t next = (uint64_t)footer;
            terms = index < indexEnd;
            if (terms) {
                uint64_t delta;
                if (!(read = get_varint(index, indexEnd, &delta)) || delta == 0) { failed = 1; break; }
                index += read;
                next = termOffset + delta;
                termOffset = next;
                if (next > (uint64_t)footer) { failed = 1; break; }
            }
            if (page + next < at) { failed = 1; break; }
            reading.doclist.count = 0;
            reading.absoluteCount = 0;
            reading.open = 1;
            if (append(&reading.doclist, at, (size_t)(page + next - at)) != SQLITE_OK) { rc = SQLITE_NOMEM; failed = 1; break; }
        }
        if (failed) break;
        rc = SQLITE_ROW;
    }
    if (rc == SQLITE_DONE) {
        rc = expected == base + lastPage + 1 ? finish_word(&reading, &postings, weights, columnCount, threshold, word, context) : UNREADABLE;
    }
    sqlite3_finalize(statement);
    free(reading.term.bytes);
    free(reading.doclist.bytes);
    free(reading.absolute);
    free(postings.items);
    free(postings.frequencies);
    return rc;
}
