#include "AnalyzerFTS5.h"
#include "Analyzer.h"

#include <stdlib.h>
#include <string.h>

// A table's tokenizer: the language its words are stemmed for (`tokenize = 'replica de'`), if any.
typedef struct {
    char language[16];
} Instance;

static int create(void *context, const char **arguments, int count, Fts5Tokenizer **out) {
    (void)context;
    if (count > 1) return SQLITE_ERROR;   // at most the language
    if (count == 1 && (strlen(arguments[0]) >= sizeof(((Instance *)0)->language) || !replica_analyzer_stems(arguments[0]))) {
        return SQLITE_ERROR;               // a language Snowball has no stemmer for
    }
    Instance *instance = sqlite3_malloc(sizeof(Instance));
    if (!instance) return SQLITE_NOMEM;
    instance->language[0] = 0;
    if (count == 1) strcpy(instance->language, arguments[0]);
    *out = (Fts5Tokenizer *)instance;
    return SQLITE_OK;
}

static void destroy(Fts5Tokenizer *tokenizer) { sqlite3_free(tokenizer); }

typedef struct {
    void *context;
    int (*token)(void *, int, const char *, int, int, int);
} Forward;

static int forward(void *context, int flags, const char *token, int length, int start, int end) {
    Forward *to = context;
    return to->token(to->context, (flags & REPLICA_TOKEN_COLOCATED) ? FTS5_TOKEN_COLOCATED : 0, token, length, start, end);
}

static int tokenize(Fts5Tokenizer *tokenizer, void *context, int flags, const char *text, int length,
                    int (*token)(void *, int, const char *, int, int, int)) {
    Instance *instance = (Instance *)tokenizer;
    Forward to = {context, token};
    // A document (and its text read again for a highlight or snippet) has the pairs; a query looks for
    // words. Both have stems beside their words when the table names a language (a query's stem is one
    // more way its word matches); without one, a document is stemmed for the language its writer set
    // (replica_analyzer_set_document_language) and a query not at all (replica adds its stems as terms).
    int query = (flags & FTS5_TOKENIZE_QUERY) != 0;
    // A document indexed or removed counts in the vocabulary its writer keeps (a highlight's text does not).
    int options = query ? 0 : REPLICA_ANALYZE_BIGRAMS | ((flags & FTS5_TOKENIZE_DOCUMENT) ? REPLICA_ANALYZE_COUNT_WORDS : 0);
    const char *language = instance->language[0] ? instance->language : (query ? NULL : replica_analyzer_document_language());
    // A document's text analyzed ahead on another thread (replica_preanalysis_queue), when it is this one.
    int replayed = 0;
    if ((flags & FTS5_TOKENIZE_DOCUMENT) && replica_preanalysis_replay(text, length < 0 ? 0 : (size_t)length, language, &to, forward, &replayed)) {
        return replayed < 0 ? SQLITE_NOMEM : replayed;
    }
    int rc = replica_analyze_in(text, length < 0 ? 0 : (size_t)length, options, language, &to, forward);
    return rc < 0 ? SQLITE_NOMEM : rc;
}

int replica_fts5_register_analyzer(fts5_api *api) {
    static fts5_tokenizer methods = {create, destroy, tokenize};
    return api->xCreateTokenizer(api, "replica", 0, &methods, 0);
}
