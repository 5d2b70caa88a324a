#include "Analyzer.h"
#include "LanguageSlot.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// A text's tokens, each a header of varints (its flags, its length, its start's difference from the
// token before's, zigzagged, and its word's length in the text) followed by its bytes, with the text
// and the language they were made from. A token the vocabulary counts, the first time the text has
// it, is marked (COUNTED), and its vocabulary hash is kept in `hashes`, in the order of the tokens so
// marked: the writer's thread counts it without deciding or hashing again, and skips its repeats (a
// document counts a token once anyway).
typedef struct {
    size_t offset;     // of its bytes in `tokens`
    int length;
    uint32_t hash;
    int used;
} Counted;

struct replica_preanalysis {
    replica_preanalysis *next;
    char language[REPLICA_LANGUAGE_SLOT];
    char *text;
    size_t length;
    unsigned char *tokens;
    size_t used;
    size_t capacity;
    int64_t last_start;
    // While the text is analyzed, the tokens counted so far: an open-addressed table by hash (the
    // analyzing thread's, kept for its next text; none in an analysis handed over).
    Counted *counted;
    size_t counted_capacity;   // a power of two, or 0
    // How many tokens were counted, in the analysis under way and in one handed over alike.
    size_t counted_count;
    // The counted tokens' hashes in the order they come (`counted_count` of them; in an analysis handed
    // over, in its block before the text), for the replay to have the writer's vocabulary entries fetched
    // ahead of counting them (replica_vocabulary_prefetch).
    uint32_t *hashes;
    size_t hashes_capacity;
};

#define COUNTED 0x100

// The hashes follow the header in a handed-over block: its size keeps them aligned.
_Static_assert(sizeof(replica_preanalysis) % _Alignof(uint32_t) == 0, "the hashes after the header are aligned");

// Whether the text had `token` among its counted tokens already.
static int counted_before(const replica_preanalysis *analysis, const char *token, int length, uint32_t hash) {
    if (!analysis->counted_capacity) return 0;
    size_t slot = hash & (analysis->counted_capacity - 1);
    while (analysis->counted[slot].used) {
        Counted entry = analysis->counted[slot];
        if (entry.hash == hash && entry.length == length && memcmp(analysis->tokens + entry.offset, token, (size_t)length) == 0) return 1;
        slot = (slot + 1) & (analysis->counted_capacity - 1);
    }
    return 0;
}

// Notes a counted token whose bytes are at `offset` in `tokens`; 0 when out of memory.
static int note_counted(replica_preanalysis *analysis, size_t offset, int length, uint32_t hash) {
    if ((analysis->counted_count + 1) * 2 > analysis->counted_capacity) {
        size_t capacity = analysis->counted_capacity ? analysis->counted_capacity * 2 : 64;
        Counted *table = calloc(capacity, sizeof(Counted));
        if (!table) return 0;
        for (size_t i = 0; i < analysis->counted_capacity; i++) {
            Counted entry = analysis->counted[i];
            if (!entry.used) continue;
            size_t slot = entry.hash & (capacity - 1);
            while (table[slot].used) slot = (slot + 1) & (capacity - 1);
            table[slot] = entry;
        }
        free(analysis->counted);
        analysis->counted = table;
        analysis->counted_capacity = capacity;
    }
    if (analysis->counted_count + 1 > analysis->hashes_capacity) {
        size_t capacity = analysis->hashes_capacity ? analysis->hashes_capacity * 2 : 64;
        uint32_t *hashes = realloc(analysis->hashes, capacity * sizeof *hashes);
        if (!hashes) return 0;
        analysis->hashes = hashes;
        analysis->hashes_capacity = capacity;
    }
    size_t slot = hash & (analysis->counted_capacity - 1);
    while (analysis->counted[slot].used) slot = (slot + 1) & (analysis->counted_capacity - 1);
    analysis->counted[slot] = (Counted){offset, length, hash, 1};
    analysis->hashes[analysis->counted_count++] = hash;
    return 1;
}

static size_t put_varint(unsigned char *into, uint64_t value) {
    size_t count = 0;
    while (value >= 0x80) {
        into[count++] = (unsigned char)(value & 0x7f) | 0x80;
        value >>= 7;
    }
    into[count++] = (unsigned char)value;
    return count;
}

static uint64_t get_varint(const unsigned char *from, size_t *at) {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
        unsigned char byte = from[(*at)++];
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
    }
}

static int record(void *context, int flags, const char *token, int length, int start, int end) {
    replica_preanalysis *analysis = context;
    if (length < 0 || end < start) return -1;
    size_t needed = analysis->used + 4 * 10 + (size_t)length;
    if (needed > analysis->capacity) {
        size_t capacity = analysis->capacity ? analysis->capacity : 256;
        while (capacity < needed) capacity *= 2;
        unsigned char *grown = realloc(analysis->tokens, capacity);
        if (!grown) return -1;
        analysis->tokens = grown;
        analysis->capacity = capacity;
    }
    int64_t delta = (int64_t)start - analysis->last_start;
    analysis->last_start = start;
    uint32_t hash = 0;
    int counted = replica_vocabulary_holds(token, length);
    if (counted) {
        hash = replica_vocabulary_hash(token, length);
        counted = !counted_before(analysis, token, length, hash);
    }
    unsigned char *at = analysis->tokens + analysis->used;
    at += put_varint(at, (uint64_t)(uint32_t)(flags | (counted ? COUNTED : 0)));
    at += put_varint(at, (uint64_t)length);
    at += put_varint(at, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
    at += put_varint(at, (uint64_t)(end - start));
    size_t offset = (size_t)(at - analysis->tokens);
    if (length > 0) memcpy(at, token, (size_t)length);
    if (counted && !note_counted(analysis, offset, length, hash)) return -1;
    analysis->used = offset + (size_t)length;
    return 0;
}

// The calling thread's analysis under way, its tokens and its table of counted tokens kept from one
// text to the next: a text is analyzed in it, then copied (the counted tokens' hashes, its text and its
// tokens) into the one block it is handed over in. The thread that replays that (the writer's) frees
// one block per text, not four allocations made by another thread.
//
// A table of counted tokens grown past this many slots (a long text's) is not kept, so that each short
// text after it does not clear a large one; nor are tokens of more than 64 KiB (a long file's), so that
// a thread that once prepared a long text does not hold its size.
#define WORKING_COUNTED_KEPT 256
#define WORKING_TOKENS_KEPT (64 << 10)

static _Thread_local replica_preanalysis *working;
// The buffers are freed when their thread ends (Dispatch ends a worker thread idle for a few seconds):
// each thread's analysis is the value of this key, whose destructor frees it.
static pthread_key_t working_key;
static int working_key_made;
static pthread_once_t working_once = PTHREAD_ONCE_INIT;

static atomic_llong tables_freed;

static void free_working(void *value) {
    replica_preanalysis *analysis = value;
    free(analysis->tokens);
    free(analysis->counted);
    free(analysis->hashes);
    free(analysis);
    atomic_fetch_add(&tables_freed, 1);
}

long long replica_preanalysis_tables_freed(void) { return atomic_load(&tables_freed); }

static void make_working_key(void) { working_key_made = pthread_key_create(&working_key, free_working) == 0; }

// The calling thread's analysis, made at its first text; NULL when out of memory.
static replica_preanalysis *this_threads_working(void) {
    if (working) return working;
    pthread_once(&working_once, make_working_key);
    if (!working_key_made) return NULL;
    replica_preanalysis *analysis = calloc(1, sizeof *analysis);
    if (!analysis) return NULL;
    if (pthread_setspecific(working_key, analysis) != 0) {
        free(analysis);
        return NULL;
    }
    working = analysis;
    return analysis;
}

replica_preanalysis *replica_preanalyze(const char *text, size_t length, const char *language) {
    replica_preanalysis *work = this_threads_working();
    if (!work) return NULL;
    replica_language_slot(language, work->language);
    work->length = length;
    work->used = 0;
    work->last_start = 0;
    // Sized for the usual: a token of about 6 bytes and its 4 bytes of header for every 6 bytes of text
    // (what the buffer held before is not kept: it is made again).
    size_t wanted = length * 2 + 64;
    if (work->capacity < wanted) {
        free(work->tokens);
        work->tokens = malloc(wanted);
        work->capacity = work->tokens ? wanted : 0;
        if (!work->tokens) return NULL;
    }
    // The last text's counted tokens cleared (an empty one left none).
    if (work->counted_count) memset(work->counted, 0, work->counted_capacity * sizeof(Counted));
    work->counted_count = 0;
    // record() may grow the buffers: they stay this thread's.
    int failed = replica_analyze_in(text, length, REPLICA_ANALYZE_BIGRAMS, work->language[0] ? work->language : NULL, work, record) != 0;
    // The hashes first, after the header (whose size is a multiple of 4), then the text and the tokens.
    size_t hash_bytes = work->counted_count * sizeof(uint32_t);
    replica_preanalysis *analysis = failed ? NULL : malloc(sizeof *analysis + hash_bytes + length + work->used);
    if (analysis) {
        *analysis = (replica_preanalysis){
            .length = length, .used = work->used, .capacity = work->used, .counted_count = work->counted_count};
        memcpy(analysis->language, work->language, sizeof analysis->language);
        analysis->hashes = (uint32_t *)(analysis + 1);
        if (hash_bytes) memcpy(analysis->hashes, work->hashes, hash_bytes);
        analysis->text = (char *)analysis->hashes + hash_bytes;
        if (length) memcpy(analysis->text, text, length);
        analysis->tokens = (unsigned char *)analysis->text + length;
        if (work->used) memcpy(analysis->tokens, work->tokens, work->used);
    }
    if (work->counted_capacity > WORKING_COUNTED_KEPT) {
        free(work->counted);
        work->counted = NULL;
        work->counted_capacity = 0;
        work->counted_count = 0;
        free(work->hashes);
        work->hashes = NULL;
        work->hashes_capacity = 0;
    }
    if (work->capacity > WORKING_TOKENS_KEPT) {
        free(work->tokens);
        work->tokens = NULL;
        work->capacity = 0;
    }
    return analysis;
}

void replica_preanalysis_free(replica_preanalysis *analysis) { free(analysis); }

// The calling thread's queue: what its next document texts are expected to be.
static _Thread_local replica_preanalysis *queue_first;
static _Thread_local replica_preanalysis *queue_last;
// A failed analysis (NULL) was queued: the texts no longer line up with the queue, which the next
// replay discards.
static _Thread_local int queue_broken;
static _Thread_local long long replayed;

long long replica_preanalysis_replayed(void) { return replayed; }

void replica_preanalysis_queue(replica_preanalysis *analysis) {
    if (!analysis) {
        queue_broken = 1;
        return;
    }
    analysis->next = NULL;
    if (queue_last) {
        queue_last->next = analysis;
    } else {
        queue_first = analysis;
    }
    queue_last = analysis;
}

void replica_preanalysis_discard(void) {
    while (queue_first) {
        replica_preanalysis *next = queue_first->next;
        replica_preanalysis_free(queue_first);
        queue_first = next;
    }
    queue_last = NULL;
    queue_broken = 0;
}

// How many counted tokens ahead of the one being counted a replay has fetched the entries of.
#define PREFETCHED 16

int replica_preanalysis_replay(const char *text, size_t length, const char *language, void *context, replica_token_sink sink, int *result) {
    replica_preanalysis *analysis = queue_first;
    if (!analysis) return 0;
    char wanted[REPLICA_LANGUAGE_SLOT];
    replica_language_slot(language, wanted);
    if (queue_broken || analysis->length != length || strcmp(analysis->language, wanted) != 0 ||
        (length && memcmp(analysis->text, text, length) != 0)) {
        replica_preanalysis_discard();
        return 0;
    }
    queue_first = analysis->next;
    if (!queue_first) queue_last = NULL;
    replayed++;
    int counting = replica_vocabulary_counting();
    // The vocabulary's entries for the next PREFETCHED counted tokens are asked of memory while FTS5 takes
    // the tokens before them: by the time each is counted, its entry is in the cache.
    for (size_t i = 0; counting && i < analysis->counted_count && i < PREFETCHED; i++) {
        replica_vocabulary_prefetch(analysis->hashes[i]);
    }
    int returned = 0;
    int64_t start = 0;
    size_t counted = 0;
    for (size_t at = 0; at < analysis->used && !returned;) {
        int flags = (int)get_varint(analysis->tokens, &at);
        int tokenLength = (int)get_varint(analysis->tokens, &at);
        uint64_t zigzag = get_varint(analysis->tokens, &at);
        start += (int64_t)(zigzag >> 1) ^ -(int64_t)(zigzag & 1);
        int64_t end = start + (int64_t)get_varint(analysis->tokens, &at);
        const char *token = (const char *)analysis->tokens + at;
        at += (size_t)tokenLength;
        if (flags & COUNTED) {
            uint32_t hash = analysis->hashes[counted];
            if (counting && counted + PREFETCHED < analysis->counted_count) {
                replica_vocabulary_prefetch(analysis->hashes[counted + PREFETCHED]);
            }
            counted++;
            if (counting && replica_vocabulary_add_held(token, tokenLength, hash) < 0) {
                returned = -1;
                break;
            }
        }
        flags &= ~COUNTED;
        returned = sink(context, flags, token, tokenLength, (int)start, (int)end);
    }
    replica_preanalysis_free(analysis);
    *result = returned;
    return 1;
}
