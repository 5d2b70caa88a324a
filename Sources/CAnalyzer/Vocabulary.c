#include "Analyzer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The vocabulary's changes this thread has counted since it last drained them: an open-addressed table of
// words, each with its change in documents and the number of the last document that counted it (a
// document counts a word once, however often it has it).
//
// A word of up to INLINE_BYTES bytes (most are) is kept in its entry, so that finding it reads the entry
// alone, not then the word's own allocation: the table outgrows the processor's caches on a large load,
// and the writer looks a word up in it for each of a document's words. A replay asks for the entries a
// few words ahead, too (replica_vocabulary_prefetch). On a load of 100,000 paragraphs, by `perf`, the
// writer's lookups, the `memcmp` samples (about half of them these words' comparisons, the rest FTS5's)
// and the sort of the changes took 0.48 s of its 4.2 s a load, nearly all of it waiting for memory, and
// 0.26 s with both, the prefetches included (docs/benchmarks/indexing.md, 2026-12-07, eleventh stop).
#define INLINE_BYTES 16

typedef struct {
    uint32_t hash;
    int length;        // 0: an empty slot
    long long change;
    unsigned long long document;
    union {
        char inline_bytes[INLINE_BYTES];
        char *heap;    // a longer word's bytes
    } word;
} Entry;

static const char *word_of(const Entry *entry) {
    return entry->length <= INLINE_BYTES ? entry->word.inline_bytes : entry->word.heap;
}

static _Thread_local struct {
    int sign;
    unsigned long long document;
    Entry *entries;
    size_t capacity;   // a power of two, or 0
    size_t count;
} vocabulary;

static uint32_t hash_of(const char *word, int length) {
    uint32_t hash = 2166136261u;
    for (int i = 0; i < length; i++) hash = (hash ^ (unsigned char)word[i]) * 16777619u;
    return hash;
}

static int grow(void) {
    size_t capacity = vocabulary.capacity ? vocabulary.capacity * 2 : 1024;
    Entry *entries = calloc(capacity, sizeof(Entry));
    if (!entries) return 0;
    for (size_t i = 0; i < vocabulary.capacity; i++) {
        Entry *old = &vocabulary.entries[i];
        if (!old->length) continue;
        size_t slot = old->hash & (capacity - 1);
        while (entries[slot].length) slot = (slot + 1) & (capacity - 1);
        entries[slot] = *old;
    }
    free(vocabulary.entries);
    vocabulary.entries = entries;
    vocabulary.capacity = capacity;
    return 1;
}

// Whether a code point begins a word of a script that is written without typos forgiven: Han, kana,
// Hangul, Thai, Lao, Khmer and Burmese.
static int is_unforgiven_script(uint32_t c) {
    return (c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F) || (c >= 0x1100 && c <= 0x11FF)
        || (c >= 0x1780 && c <= 0x17FF) || (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3130 && c <= 0x318F)
        || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3)
        || (c >= 0xF900 && c <= 0xFAFF) || c >= 0x20000;
}

// How many bytes the UTF-8 sequence a lead byte begins has (1 for ASCII, or for a stray byte).
static int sequence_bytes(unsigned char lead) { return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1; }

int replica_vocabulary_holds(const char *word, int length) {
    if (length <= 0 || length > REPLICA_VOCABULARY_LONGEST * 4) return 0;
    int characters = 0;
    uint32_t first = 0;
    for (int i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)word[i];
        if (byte >= '0' && byte <= '9') return 0;
        if ((byte & 0xC0) == 0x80) continue;
        if (characters == 0) {
            // The first code point, decoded from its lead byte and continuation bytes.
            int extra = sequence_bytes(byte) - 1;
            first = extra == 3 ? byte & 0x07 : extra == 2 ? byte & 0x0F : extra == 1 ? byte & 0x1F : byte;
            for (int k = 1; k <= extra && i + k < length; k++) first = (first << 6) | ((unsigned char)word[i + k] & 0x3F);
        }
        characters++;
    }
    return characters >= REPLICA_VOCABULARY_SHORTEST && characters <= REPLICA_VOCABULARY_LONGEST && !is_unforgiven_script(first);
}

void replica_vocabulary_count(int sign) {
    vocabulary.sign = sign;
}

int replica_vocabulary_counting(void) { return vocabulary.sign; }

void replica_vocabulary_next_document(void) { vocabulary.document++; }

int replica_vocabulary_add(const char *word, int length) {
    if (!vocabulary.sign || !replica_vocabulary_holds(word, length)) return 0;
    return replica_vocabulary_add_held(word, length, hash_of(word, length));
}

uint32_t replica_vocabulary_hash(const char *word, int length) { return hash_of(word, length); }

// The entry's start only: an entry of 40 bytes may straddle two cache lines, but fetching its end too
// took the prefetches 0.04 s a load of 100,000 paragraphs instead of 0.02 s, with the lookups no faster.
void replica_vocabulary_prefetch(uint32_t hash) {
    if (vocabulary.capacity) __builtin_prefetch(&vocabulary.entries[hash & (vocabulary.capacity - 1)]);
}

int replica_vocabulary_add_held(const char *word, int length, uint32_t hash) {
    if (!vocabulary.sign) return 0;
    if ((vocabulary.count + 1) * 2 > vocabulary.capacity && !grow()) return -1;
    size_t slot = hash & (vocabulary.capacity - 1);
    for (;;) {
        Entry *entry = &vocabulary.entries[slot];
        if (!entry->length) {
            char *bytes = entry->word.inline_bytes;
            if (length > INLINE_BYTES) {
                bytes = malloc((size_t)length);
                if (!bytes) return -1;
                entry->word.heap = bytes;
            }
            memcpy(bytes, word, (size_t)length);
            entry->length = length;
            entry->hash = hash;
            entry->change = vocabulary.sign;
            entry->document = vocabulary.document;
            vocabulary.count++;
            return 0;
        }
        if (entry->hash == hash && entry->length == length && memcmp(word_of(entry), word, (size_t)length) == 0) {
            if (entry->document != vocabulary.document) {
                entry->change += vocabulary.sign;
                entry->document = vocabulary.document;
            }
            return 0;
        }
        slot = (slot + 1) & (vocabulary.capacity - 1);
    }
}

// The bytes of a token's first character, and its characters (code points), as SQLite's `substr` and
// `length` count them.
static int first_character_bytes(const Entry *entry) {
    int bytes = sequence_bytes((unsigned char)word_of(entry)[0]);
    return bytes < entry->length ? bytes : entry->length;
}

static int characters(const Entry *entry) {
    int count = 0;
    const char *word = word_of(entry);
    for (int i = 0; i < entry->length; i++) count += ((unsigned char)word[i] & 0xC0) != 0x80;
    return count;
}

static int in_bytes(const char *a, int a_length, const char *b, int b_length) {
    int common = memcmp(a, b, (size_t)(a_length < b_length ? a_length : b_length));
    return common ? common : a_length - b_length;
}

// The order of the vocabulary's key (migration 0018): the first character, the length in characters,
// then the token, each text in bytes as SQLite's BINARY collation compares them.
static int in_vocabulary_order(const void *left, const void *right) {
    const Entry *a = *(const Entry *const *)left, *b = *(const Entry *const *)right;
    int first = in_bytes(word_of(a), first_character_bytes(a), word_of(b), first_character_bytes(b));
    if (first) return first;
    int a_characters = characters(a), b_characters = characters(b);
    if (a_characters != b_characters) return a_characters < b_characters ? -1 : 1;
    return in_bytes(word_of(a), a->length, word_of(b), b->length);
}

void replica_vocabulary_drain(void *context, replica_vocabulary_visit visit) {
    // The changed tokens in the order of the vocabulary's key, so that the writer's upserts go through
    // it from one end to the other instead of at random; unsorted when out of memory.
    Entry **changed = visit && vocabulary.count ? malloc(vocabulary.count * sizeof *changed) : NULL;
    size_t count = 0;
    for (size_t i = 0; i < vocabulary.capacity; i++) {
        Entry *entry = &vocabulary.entries[i];
        if (!visit || !entry->length || entry->change == 0) continue;
        if (changed) {
            changed[count++] = entry;
        } else {
            visit(context, word_of(entry), entry->length, entry->change);
        }
    }
    if (changed) {
        qsort(changed, count, sizeof *changed, in_vocabulary_order);
        for (size_t i = 0; i < count; i++) visit(context, word_of(changed[i]), changed[i]->length, changed[i]->change);
        free(changed);
    }
    for (size_t i = 0; i < vocabulary.capacity; i++) {
        if (vocabulary.entries[i].length > INLINE_BYTES) free(vocabulary.entries[i].word.heap);
    }
    free(vocabulary.entries);
    vocabulary.entries = NULL;
    vocabulary.capacity = 0;
    vocabulary.count = 0;
}
