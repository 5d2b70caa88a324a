#include <sqlite3.h>
#include <math.h>

// SQLITE_TRANSIENT is a macro around a cast; Swift cannot import it.
static inline sqlite3_destructor_type replica_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// SQLite keeps memory statistics by default, which takes a global mutex on every allocation; replica
// reads none of them. sqlite3_config is variadic, which Swift cannot call. Returns SQLITE_MISUSE, and
// changes nothing, once SQLite has been initialized in this process.
static inline int replica_sqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// sqlite3_db_config is variadic too.
static inline int replica_sqlite_disable_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

// FTS5's own tokenizers, called directly (to make the same words FTS5 makes, for another store). The
// fts5_api pointer comes from `SELECT fts5(?1)` with a bound pointer, as the FTS5 documentation shows.
typedef struct replica_fts5_tokenizer {
    fts5_tokenizer methods;
    Fts5Tokenizer *instance;
} replica_fts5_tokenizer;

// FTS5's API object of `db` (the documented `SELECT fts5(?1)` handshake).
static inline int replica_fts5_api(sqlite3 *db, fts5_api **out) {
    *out = 0;
    sqlite3_stmt *statement = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_pointer(statement, 1, (void *)out, "fts5_api_ptr", 0);
    sqlite3_step(statement);
    rc = sqlite3_finalize(statement);
    if (rc != SQLITE_OK) return rc;
    return *out == 0 ? SQLITE_ERROR : SQLITE_OK;
}

// Creates tokenizer `name` with `arguments` through `db`, which must stay open while it is used.
static inline int replica_fts5_tokenizer_create(sqlite3 *db, const char *name, const char **arguments, int count,
                                                replica_fts5_tokenizer *out) {
    fts5_api *api = 0;
    int rc = replica_fts5_api(db, &api);
    if (rc != SQLITE_OK) return rc;
    void *context = 0;
    rc = api->xFindTokenizer(api, name, &context, &out->methods);
    if (rc != SQLITE_OK) return rc;
    return out->methods.xCreate(context, arguments, count, &out->instance);
}

static inline int replica_fts5_tokenize(replica_fts5_tokenizer *tokenizer, void *context, int flags, const char *text, int length,
                                        int (*token)(void *, int, const char *, int, int, int)) {
    return tokenizer->methods.xTokenize(tokenizer->instance, context, flags, text, length, token);
}

static inline void replica_fts5_tokenizer_delete(replica_fts5_tokenizer *tokenizer) {
    if (tokenizer->instance != 0) tokenizer->methods.xDelete(tokenizer->instance);
    tokenizer->instance = 0;
}

// replica_frequencies(items_text, w0, w1, …): for the current row of an FTS5 query, a blob of doubles:
// the row's length in tokens (all columns), then for each phrase of the query the sum over its hits of
// the weight of the column it is in (a column without a weight weighs 1). These are exactly the
// numbers FTS5's bm25() computes for a row before it combines them with each phrase's frequency among
// all rows, which this function does not count: replica ranks a few rows with numbers it keeps itself.
static inline void replica_fts5_frequencies(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context,
                                     int argc, sqlite3_value **argv) {
    int phrases = api->xPhraseCount(fts);
    double *out = sqlite3_malloc64(sizeof(double) * (sqlite3_uint64)(phrases + 1));
    if (out == 0) { sqlite3_result_error_nomem(context); return; }
    for (int i = 0; i <= phrases; i++) out[i] = 0;
    int length = 0;
    int rc = api->xColumnSize(fts, -1, &length);
    int instances = 0;
    if (rc == SQLITE_OK) rc = api->xInstCount(fts, &instances);
    for (int i = 0; rc == SQLITE_OK && i < instances; i++) {
        int phrase = 0, column = 0, offset = 0;
        rc = api->xInst(fts, i, &phrase, &column, &offset);
        if (rc == SQLITE_OK) out[1 + phrase] += column < argc ? sqlite3_value_double(argv[column]) : 1.0;
    }
    if (rc != SQLITE_OK) { sqlite3_free(out); sqlite3_result_error_code(context, rc); return; }
    out[0] = (double)length;
    sqlite3_result_blob(context, out, (int)sizeof(double) * (phrases + 1), sqlite3_free);
}

// What replica_bm25 keeps for a query: each phrase's weighted idf and the average row length, computed
// once, and room for a row's frequencies (`phrases` doubles after the idfs), so that no row allocates.
typedef struct replica_bm25_data {
    int phrases;
    double averageLength;
    double values[];
} replica_bm25_data;

static inline int replica_fts5_count_hit(const Fts5ExtensionApi *api, Fts5Context *fts, void *context) {
    (void)api; (void)fts;
    (*(sqlite3_int64 *)context)++;
    return SQLITE_OK;
}

// replica_bm25(items_text, c0, c1, c2, c3, c4, p0, p1, …): FTS5's bm25() with the five column weights
// c0…c4 (as `rank`'s bm25(10.0, 5.0, 5.0, 2.0, 1.0)), each phrase's idf multiplied by its weight p0, p1, …
// (1 for a phrase without one): a word's form as typed counts less than its stem beside it. With every
// weight 1 it is bm25() itself: the same numbers combined by the same operations in the same order
// (fts5_aux.c), which RankingLists and the PostgreSQL reader also follow, so their scores stay equal.
static inline void replica_fts5_bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context,
                                     int argc, sqlite3_value **argv) {
    const double k1 = 1.2, b = 0.75;
    const int columns = 5;
    int rc = SQLITE_OK;
    replica_bm25_data *data = api->xGetAuxdata(fts, 0);
    if (data == 0) {
        int phrases = api->xPhraseCount(fts);
        data = sqlite3_malloc64(sizeof(replica_bm25_data) + 2 * sizeof(double) * (sqlite3_uint64)phrases);
        if (data == 0) { sqlite3_result_error_nomem(context); return; }
        data->phrases = phrases;
        sqlite3_int64 rows = 0, tokens = 0;
        rc = api->xRowCount(fts, &rows);
        if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
        if (rc == SQLITE_OK) data->averageLength = (double)tokens / (double)rows;
        for (int i = 0; rc == SQLITE_OK && i < phrases; i++) {
            sqlite3_int64 hits = 0;
            rc = api->xQueryPhrase(fts, i, &hits, replica_fts5_count_hit);
            double idf = log(((double)rows - (double)hits + 0.5) / ((double)hits + 0.5));
            if (idf <= 0.0) idf = 1e-6;
            data->values[i] = idf * (columns + i < argc ? sqlite3_value_double(argv[columns + i]) : 1.0);
        }
        if (rc == SQLITE_OK) rc = api->xSetAuxdata(fts, data, sqlite3_free);
        else sqlite3_free(data);
        if (rc != SQLITE_OK) { sqlite3_result_error_code(context, rc); return; }
    }
    const double *idfs = data->values;
    double *frequencies = data->values + data->phrases;
    for (int i = 0; i < data->phrases; i++) frequencies[i] = 0;
    int instances = 0, length = 0;
    rc = api->xInstCount(fts, &instances);
    for (int i = 0; rc == SQLITE_OK && i < instances; i++) {
        int phrase = 0, column = 0, offset = 0;
        rc = api->xInst(fts, i, &phrase, &column, &offset);
        if (rc == SQLITE_OK) frequencies[phrase] += column < argc && column < columns ? sqlite3_value_double(argv[column]) : 1.0;
    }
    if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &length);
    if (rc != SQLITE_OK) { sqlite3_result_error_code(context, rc); return; }
    double score = 0.0;
    for (int i = 0; i < data->phrases; i++) {
        score += idfs[i] * ((frequencies[i] * (k1 + 1.0)) / (frequencies[i] + k1 * (1 - b + b * (double)length / data->averageLength)));
    }
    sqlite3_result_double(context, -1.0 * score);
}

// Registers replica_frequencies and replica_bm25 on `db` (an FTS5 auxiliary function lives on one connection).
static inline int replica_fts5_register_functions(sqlite3 *db) {
    fts5_api *api = 0;
    int rc = replica_fts5_api(db, &api);
    if (rc != SQLITE_OK) return rc;
    rc = api->xCreateFunction(api, "replica_frequencies", 0, replica_fts5_frequencies, 0);
    if (rc != SQLITE_OK) return rc;
    return api->xCreateFunction(api, "replica_bm25", 0, replica_fts5_bm25, 0);
}
