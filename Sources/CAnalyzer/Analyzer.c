#include "Analyzer.h"
#include "LanguageSlot.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>
#include <unicode/uversion.h>
#include <libstemmer.h>

// A growable UTF-16 or UTF-8 buffer; `failed` once an allocation did not succeed.
typedef struct {
    UChar *units;
    int32_t length;
    int32_t capacity;
} Units;

typedef struct {
    char *bytes;
    int32_t length;
    int32_t capacity;
} Bytes;

static int reserve_units(Units *buffer, int32_t capacity) {
    if (capacity <= buffer->capacity) return 1;
    int32_t grown = buffer->capacity ? buffer->capacity : 64;
    while (grown < capacity) grown = grown > INT32_MAX / 2 ? capacity : grown * 2;
    UChar *units = realloc(buffer->units, (size_t)grown * sizeof(UChar));
    if (!units) return 0;
    buffer->units = units;
    buffer->capacity = grown;
    return 1;
}

static int reserve_bytes(Bytes *buffer, int32_t capacity) {
    if (capacity <= buffer->capacity) return 1;
    int32_t grown = buffer->capacity ? buffer->capacity : 64;
    while (grown < capacity) grown = grown > INT32_MAX / 2 ? capacity : grown * 2;
    char *bytes = realloc(buffer->bytes, (size_t)grown);
    if (!bytes) return 0;
    buffer->bytes = bytes;
    buffer->capacity = grown;
    return 1;
}

// The analyzer's own steps on this thread (a unit converted, a character looked at, a unit normalized,
// a pair made), for tests that check the cost stays linear without timing it.
static _Thread_local long long thread_steps;

long long replica_analyzer_steps(void) { return thread_steps; }

// A word break iterator per thread, cloned once from ICU's rules: opening one loads and compiles its
// data (tens of microseconds), which an analysis per item would pay each time.
static _Thread_local UBreakIterator *thread_words;

static UBreakIterator *word_iterator(UErrorCode *status) {
    if (!thread_words) thread_words = ubrk_open(UBRK_WORD, "", NULL, 0, status);
    return thread_words;
}

static void forget_stems(void);

// Snowball's stemmers, a few per thread (a stemmer is not safe to share between threads), by language.
#define STEMMERS 8
static _Thread_local struct {
    char language[16];
    struct sb_stemmer *stemmer;
} thread_stemmers[STEMMERS];

// The stemmer of `language` (Snowball's name or its ISO 639 code: "english", "en", "de"), or NULL when
// Snowball has none for it.
static struct sb_stemmer *stemmer_for(const char *language) {
    if (!language || !language[0] || strlen(language) >= sizeof thread_stemmers[0].language) return NULL;
    int free_slot = -1;
    for (int i = 0; i < STEMMERS; i++) {
        if (thread_stemmers[i].language[0] == 0) {
            if (free_slot < 0) free_slot = i;
        } else if (strcmp(thread_stemmers[i].language, language) == 0) {
            return thread_stemmers[i].stemmer;
        }
    }
    struct sb_stemmer *stemmer = sb_stemmer_new(language, "UTF_8");
    int slot = free_slot >= 0 ? free_slot : 0;
    if (free_slot < 0 && thread_stemmers[0].stemmer) {
        // A new stemmer may be made at the old one's address: the stems kept by address go with it.
        forget_stems();
        sb_stemmer_delete(thread_stemmers[0].stemmer);
    }
    strcpy(thread_stemmers[slot].language, language);
    thread_stemmers[slot].stemmer = stemmer;   // NULL is kept too: Snowball has no stemmer for it
    return stemmer;
}

// Characters a word is made of, as in SQLite's unicode61 (letters, numbers, private use) and marks, so
// that the vowel signs of Indic scripts stay in their words: the rest (punctuation, apostrophes, symbols,
// emoji) separates words, also inside what ICU takes as one ("don't", "U.S.A", "foo_bar").
static int is_word_character(UChar32 c) {
    int8_t type = u_charType(c);
    switch (type) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER: case U_OTHER_LETTER:
    case U_DECIMAL_DIGIT_NUMBER: case U_LETTER_NUMBER: case U_OTHER_NUMBER:
    case U_NON_SPACING_MARK: case U_COMBINING_SPACING_MARK: case U_ENCLOSING_MARK:
    case U_PRIVATE_USE_CHAR:
        return 1;
    default:
        return 0;
    }
}

// Scripts whose long words also get their pairs of characters: written without spaces, or (Hangul)
// with particles joined to the word.
static int is_paired_script(UChar32 c) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript(c, &status);
    return U_SUCCESS(status) && (script == USCRIPT_HAN || script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA
                                 || script == USCRIPT_HANGUL);
}

// Whether the words of `language` keep their tone marks beside their folded form (spelled as VNI
// types them: emit_marked): Vietnamese, whose tones tell words apart ("ma", "má", "mà", "mả", "mã" and "mạ" are six words).
static int keeps_tone_marks(const char *language) {
    return language && (strcmp(language, "vi") == 0 || strcmp(language, "vietnamese") == 0);
}

// Scripts whose accents are folded (é as e, ά as α), as SQLite's remove_diacritics folds Latin's.
static int folds_accents(UChar32 c) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript(c, &status);
    return U_SUCCESS(status) && (script == USCRIPT_LATIN || script == USCRIPT_GREEK);
}

// What one analysis holds: the text in UTF-16 with each unit's byte offset, and scratch buffers.
typedef struct {
    const UNormalizer2 *fold;       // NFKC with case folded
    const UNormalizer2 *decompose;  // NFD
    const UNormalizer2 *compose;    // NFC
    Units folded, decomposed, stripped, composed, stem, stem_composed;
    Bytes token, stem_bytes;
    struct sb_stemmer *stemmer;
    // Vietnamese: a word's tone marks tell it from others, so the word as written (spelled as VNI types
    // it: emit_marked) stands beside the word with its accents folded, as a stem does.
    int keeps_tone_marks;
    void *context;
    replica_token_sink sink;
    // Whether each token counts in the thread's vocabulary changes (REPLICA_ANALYZE_COUNT_WORDS).
    int counting;
} Analysis;

// `units` normalized by `normalizer` into `into` (which grows as needed).
static int normalize(const UNormalizer2 *normalizer, const UChar *units, int32_t length, Units *into) {
    UErrorCode status = U_ZERO_ERROR;
    thread_steps += length;
    if (!reserve_units(into, length + 16)) return 0;
    into->length = unorm2_normalize(normalizer, units, length, into->units, into->capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        status = U_ZERO_ERROR;
        if (!reserve_units(into, into->length + 1)) return 0;
        into->length = unorm2_normalize(normalizer, units, length, into->units, into->capacity, &status);
    }
    return U_SUCCESS(status);
}

// Sends `units` as UTF-8.
static int emit(Analysis *analysis, int flags, const UChar *units, int32_t length, int start, int end) {
    UErrorCode status = U_ZERO_ERROR;
    if (!reserve_bytes(&analysis->token, length * 3 + 1)) return -1;
    int32_t written = 0;
    u_strToUTF8(analysis->token.bytes, analysis->token.capacity, &written, units, length, &status);
    if (U_FAILURE(status)) return -1;
    if (analysis->counting && replica_vocabulary_add(analysis->token.bytes, written) < 0) return -1;
    return analysis->sink(analysis->context, flags, analysis->token.bytes, written, start, end);
}

// `word` with the accents of its Latin and Greek letters folded: decomposed, their nonspacing marks
// dropped, composed again into `into`; `word` itself when it has none.
static Units *fold_accents(Analysis *analysis, Units *word, Units *into, int *failed) {
    int needs_folding = 0;
    for (int32_t i = 0; i < word->length && !needs_folding;) {
        UChar32 c;
        U16_NEXT(word->units, i, word->length, c);
        needs_folding = c >= 0x80 && folds_accents(c);
    }
    if (!needs_folding) return word;
    if (!normalize(analysis->decompose, word->units, word->length, &analysis->decomposed)) return *failed = 1, word;
    Units *from = &analysis->decomposed, *to = &analysis->stripped;
    if (!reserve_units(to, from->length)) return *failed = 1, word;
    to->length = 0;
    int base_folds = 0;
    for (int32_t i = 0; i < from->length;) {
        int32_t at = i;
        UChar32 c;
        U16_NEXT(from->units, i, from->length, c);
        if (u_charType(c) == U_NON_SPACING_MARK) {
            if (base_folds) continue;
        } else {
            base_folds = folds_accents(c);
        }
        for (int32_t k = at; k < i; k++) to->units[to->length++] = from->units[k];
    }
    if (!normalize(analysis->compose, to->units, to->length, into)) return *failed = 1, word;
    return into;
}

static int same_units(const Units *a, const UChar *units, int32_t length) {
    return a->length == length && memcmp(a->units, units, (size_t)length * sizeof(UChar)) == 0;
}

// Stems already made, per thread: words repeat (the, of, for…) and Snowball is most of an analysis's
// time. A direct-mapped table of short words (a longer one is stemmed each time), made at a thread's
// first stem and freed when the thread ends.
#define STEM_CACHE_ENTRIES 4096
#define STEM_CACHE_UNITS 24
typedef struct {
    const struct sb_stemmer *stemmer;   // NULL: empty
    uint8_t word_length, stem_length;
    UChar word[STEM_CACHE_UNITS], stem[STEM_CACHE_UNITS];
} StemEntry;

static pthread_key_t stem_cache_key;
static pthread_once_t stem_cache_once = PTHREAD_ONCE_INIT;
static void make_stem_cache_key(void) { pthread_key_create(&stem_cache_key, free); }

static StemEntry *stem_cache_entry(const struct sb_stemmer *stemmer, const UChar *word, int32_t length) {
    if (length > STEM_CACHE_UNITS) return NULL;
    pthread_once(&stem_cache_once, make_stem_cache_key);
    StemEntry *cache = pthread_getspecific(stem_cache_key);
    if (!cache) {
        cache = calloc(STEM_CACHE_ENTRIES, sizeof(StemEntry));
        if (!cache || pthread_setspecific(stem_cache_key, cache) != 0) {
            free(cache);
            return NULL;
        }
    }
    uint64_t hash = 0xcbf29ce484222325ULL ^ (uint64_t)(uintptr_t)stemmer;
    for (int32_t i = 0; i < length; i++) hash = (hash ^ word[i]) * 0x100000001b3ULL;
    return &cache[hash % STEM_CACHE_ENTRIES];
}

// Empties this thread's stems (its stemmers changed).
static void forget_stems(void) {
    pthread_once(&stem_cache_once, make_stem_cache_key);
    StemEntry *cache = pthread_getspecific(stem_cache_key);
    if (cache) memset(cache, 0, STEM_CACHE_ENTRIES * sizeof(StemEntry));
}

// The stem of `word` (folded, accents kept) into `analysis->stem`: from the cache, or made by Snowball.
static int stem_word(Analysis *analysis, const UChar *word, int32_t length) {
    StemEntry *entry = stem_cache_entry(analysis->stemmer, word, length);
    if (entry && entry->stemmer == analysis->stemmer && entry->word_length == length
        && memcmp(entry->word, word, (size_t)length * sizeof(UChar)) == 0) {
        if (!reserve_units(&analysis->stem, entry->stem_length + 1)) return 0;
        memcpy(analysis->stem.units, entry->stem, (size_t)entry->stem_length * sizeof(UChar));
        analysis->stem.length = entry->stem_length;
        thread_steps += length;
        return 1;
    }
    UErrorCode status = U_ZERO_ERROR;
    Bytes *bytes = &analysis->stem_bytes;
    if (!reserve_bytes(bytes, length * 3 + 1)) return 0;
    u_strToUTF8(bytes->bytes, bytes->capacity, &bytes->length, word, length, &status);
    if (U_FAILURE(status)) return 0;
    const sb_symbol *stemmed = sb_stemmer_stem(analysis->stemmer, (const sb_symbol *)bytes->bytes, bytes->length);
    if (!stemmed) return 0;
    int stemmed_length = sb_stemmer_length(analysis->stemmer);
    thread_steps += stemmed_length + length;
    if (!reserve_units(&analysis->stem, stemmed_length + 1)) return 0;
    u_strFromUTF8(analysis->stem.units, analysis->stem.capacity, &analysis->stem.length, (const char *)stemmed, stemmed_length, &status);
    if (U_FAILURE(status)) return 0;
    if (entry && analysis->stem.length <= STEM_CACHE_UNITS) {
        entry->stemmer = analysis->stemmer;
        entry->word_length = (uint8_t)length;
        entry->stem_length = (uint8_t)analysis->stem.length;
        memcpy(entry->word, word, (size_t)length * sizeof(UChar));
        memcpy(entry->stem, analysis->stem.units, (size_t)analysis->stem.length * sizeof(UChar));
    }
    return 1;
}

// The digit VNI typing gives a Vietnamese mark: the five tones, then circumflex, horn and breve; 9 for
// another mark.
static UChar vni_digit(UChar32 mark) {
    switch (mark) {
    case 0x0301: return '1';   // sắc
    case 0x0300: return '2';   // huyền
    case 0x0309: return '3';   // hỏi
    case 0x0303: return '4';   // ngã
    case 0x0323: return '5';   // nặng
    case 0x0302: return '6';   // circumflex: â ê ô
    case 0x031B: return '7';   // horn: ơ ư
    case 0x0306: return '8';   // breve: ă
    default: return '9';
    }
}

// Beside a Vietnamese word whose accents were folded (`word`, the folded form of analysis->folded,
// whose decomposition fold_accents left in analysis->decomposed), the word as written: its folded
// letters, then a digit for each of its marks in order, as VNI typing spells it ("việt" is "viet56").
// Spelled in ASCII digits, the form survives folding (FTS5 folds a query's phrases again) and is told
// from every word of another language.
static int emit_marked(Analysis *analysis, Units *word, int start, int end) {
    Units *decomposed = &analysis->decomposed, *marked = &analysis->stem;
    if (!reserve_units(marked, word->length + decomposed->length)) return -1;
    memcpy(marked->units, word->units, (size_t)word->length * sizeof(UChar));
    marked->length = word->length;
    for (int32_t i = 0; i < decomposed->length;) {
        UChar32 c;
        U16_NEXT(decomposed->units, i, decomposed->length, c);
        if (u_charType(c) == U_NON_SPACING_MARK) marked->units[marked->length++] = vni_digit(c);
    }
    if (marked->length == word->length) return 0;
    return emit(analysis, REPLICA_TOKEN_COLOCATED, marked->units, marked->length, start, end);
}

// One word (a run of word characters), from `units`, at bytes [start, end) of the text.
static int analyze_word(Analysis *analysis, const UChar *units, int32_t length, int start, int end, int options) {
    // ASCII, most words of most texts: NFKC with case folded is lowercase, and no accent is there to fold.
    int ascii = 1;
    for (int32_t i = 0; i < length && ascii; i++) ascii = units[i] < 0x80;
    if (ascii) {
        thread_steps += length;
        if (!reserve_units(&analysis->folded, length)) return -1;
        for (int32_t i = 0; i < length; i++) {
            UChar c = units[i];
            analysis->folded.units[i] = c >= 'A' && c <= 'Z' ? (UChar)(c + 32) : c;
        }
        analysis->folded.length = length;
    } else if (!normalize(analysis->fold, units, length, &analysis->folded)) {
        return -1;
    }
    int failed = 0;
    // The stem is made from the word before its accents are folded (French needs them to stem), then
    // folded in its turn; it stands beside the word when it differs.
    int stemmed = 0;
    if (analysis->stemmer && analysis->folded.length > 0) {
        UChar32 first;
        int32_t probe = 0;
        U16_NEXT(analysis->folded.units, probe, analysis->folded.length, first);
        if (u_isalpha(first) && !is_paired_script(first)) {
            if (!stem_word(analysis, analysis->folded.units, analysis->folded.length)) return -1;
            stemmed = 1;
        }
    }
    Units *word = fold_accents(analysis, &analysis->folded, &analysis->composed, &failed);
    if (failed) return -1;
    if (word->length == 0) return 0;
    int result = emit(analysis, 0, word->units, word->length, start, end);
    if (result) return result;
    if (analysis->keeps_tone_marks && word != &analysis->folded) {
        result = emit_marked(analysis, word, start, end);
        if (result) return result;
    }

    if (stemmed) {
        Units *stem = fold_accents(analysis, &analysis->stem, &analysis->stem_composed, &failed);
        if (failed) return -1;
        if (stem->length > 0 && !same_units(stem, word->units, word->length)) {
            result = emit(analysis, REPLICA_TOKEN_COLOCATED, stem->units, stem->length, start, end);
            if (result) return result;
        }
    }
    if (!(options & REPLICA_ANALYZE_BIGRAMS)) return 0;

    // The pairs of a long Han, kana or Hangul word, beside it.
    int32_t count = u_countChar32(word->units, word->length);
    if (count < 3) return 0;
    UChar32 first;
    int32_t probe = 0;
    U16_NEXT(word->units, probe, word->length, first);
    if (!is_paired_script(first)) return 0;
    int32_t previous = 0, current = 0;
    U16_FWD_1(word->units, current, word->length);
    while (current < word->length) {
        thread_steps++;
        int32_t next = current;
        U16_FWD_1(word->units, next, word->length);
        UChar32 left, right;
        U16_GET(word->units, 0, previous, word->length, left);
        U16_GET(word->units, 0, current, word->length, right);
        if (is_paired_script(left) && is_paired_script(right)) {
            result = emit(analysis, REPLICA_TOKEN_COLOCATED, word->units + previous, next - previous, start, end);
            if (result) return result;
        }
        previous = current;
        current = next;
    }
    return 0;
}

// ASCII whitespace: ICU's word breaks always fall on both sides of it.
static int is_ascii_space(UChar c) { return c == ' ' || (c >= 9 && c <= 13); }

// The words of units [from, to), all ASCII: runs of letters and digits, as ICU's words and the runs
// within them are there.
static int analyze_ascii(Analysis *analysis, const UChar *units, const int32_t *offsets, int32_t from, int32_t to, int options) {
    int32_t run = -1;
    for (int32_t i = from; i <= to; i++) {
        thread_steps++;
        UChar c = i < to ? units[i] : 0;
        UChar lower = c | 0x20;
        int inside = (c >= '0' && c <= '9') || (lower >= 'a' && lower <= 'z');
        if (inside && run < 0) run = i;
        if (!inside && run >= 0) {
            int result = analyze_word(analysis, units + run, i - run, offsets[run], offsets[i], options);
            if (result) return result;
            run = -1;
        }
    }
    return 0;
}

// The words of units [from, to) by ICU's word break rules and dictionaries: the runs of word characters
// within each of ICU's words (not its spaces and punctuation).
static int analyze_icu(Analysis *analysis, UBreakIterator *words, const UChar *units, const int32_t *offsets,
                       int32_t from, int32_t to, int options) {
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(words, units + from, to - from, &status);
    if (U_FAILURE(status)) return -1;
    int result = 0;
    int32_t start = from + ubrk_first(words);
    for (int32_t next = ubrk_next(words); next != UBRK_DONE && !result; next = ubrk_next(words)) {
        int32_t end = from + next;
        if (ubrk_getRuleStatus(words) >= UBRK_WORD_NONE_LIMIT) {
            int32_t run = -1;
            for (int32_t i = start; i <= end && !result;) {
                thread_steps++;
                int32_t at = i;
                UChar32 c = 0;
                int inside = 0;
                if (i < end) {
                    U16_NEXT(units, i, end, c);
                    inside = is_word_character(c);
                } else {
                    i++;
                }
                if (inside && run < 0) run = at;
                if (!inside && run >= 0) {
                    result = analyze_word(analysis, units + run, at - run, offsets[run], offsets[at], options);
                    run = -1;
                }
            }
        }
        start = end;
    }
    return result;
}

int replica_analyze(const char *text, size_t length, int options, void *context, replica_token_sink sink) {
    return replica_analyze_in(text, length, options, NULL, context, sink);
}

int replica_analyze_in(const char *text, size_t length, int options, const char *language, void *context, replica_token_sink sink) {
    if (length > INT32_MAX / 2) return -1;
    int32_t bytes = (int32_t)length;
    UErrorCode status = U_ZERO_ERROR;
    Analysis analysis = {0};
    analysis.fold = unorm2_getNFKCCasefoldInstance(&status);
    analysis.decompose = unorm2_getNFDInstance(&status);
    analysis.compose = unorm2_getNFCInstance(&status);
    analysis.context = context;
    analysis.sink = sink;
    analysis.stemmer = stemmer_for(language);
    analysis.keeps_tone_marks = keeps_tone_marks(language);
    analysis.counting = (options & REPLICA_ANALYZE_COUNT_WORDS) && replica_vocabulary_counting();
    UBreakIterator *words = word_iterator(&status);
    if (U_FAILURE(status) || !words) return -1;

    // The text in UTF-16 (never more units than bytes), and each unit's byte offset (one more at the end).
    UChar *units = malloc(((size_t)bytes + 1) * sizeof(UChar));
    int32_t *offsets = malloc(((size_t)bytes + 1) * sizeof(int32_t));
    int result = 0;
    if (!units || !offsets) {
        result = -1;
        goto done;
    }
    int32_t count = 0;
    for (int32_t i = 0; i < bytes;) {
        thread_steps++;
        int32_t at = i;
        UChar32 c;
        U8_NEXT(text, i, bytes, c);
        if (c < 0) c = 0xFFFD;
        offsets[count] = at;
        if (U_IS_BMP(c)) {
            units[count++] = (UChar)c;
        } else {
            units[count] = U16_LEAD(c);
            offsets[count + 1] = at;
            units[count + 1] = U16_TRAIL(c);
            count += 2;
        }
    }
    offsets[count] = bytes;

    // ASCII stretches, most of most texts, are cut where ICU would cut them without its break iterator
    // (words are runs of letters and digits there); the stretches between ASCII whitespace that hold
    // another character go to ICU, from the whitespace before them, so ICU sees what it would see in
    // the whole text (a word never spans whitespace).
    int32_t at = 0;
    while (at < count && !result) {
        int32_t other = at;
        while (other < count && units[other] < 0x80) other++;
        if (other == count || (options & REPLICA_ANALYZE_ICU_ONLY)) {
            result = (options & REPLICA_ANALYZE_ICU_ONLY) ? analyze_icu(&analysis, words, units, offsets, at, count, options)
                                                          : analyze_ascii(&analysis, units, offsets, at, count, options);
            break;
        }
        int32_t begin = other;
        while (begin > at && !is_ascii_space(units[begin - 1])) begin--;
        if (begin > at) {
            begin--;   // the whitespace before it goes to ICU too
            result = analyze_ascii(&analysis, units, offsets, at, begin, options);
            if (result) break;
        }
        // To the end of the last of the following stretches that hold another character.
        int32_t end = other;
        for (;;) {
            while (end < count && !is_ascii_space(units[end])) end++;
            int32_t next = end;
            while (next < count && is_ascii_space(units[next])) next++;
            int32_t probe = next;
            while (probe < count && !is_ascii_space(units[probe]) && units[probe] < 0x80) probe++;
            if (probe == count || is_ascii_space(units[probe])) break;
            end = probe;
        }
        result = analyze_icu(&analysis, words, units, offsets, begin, end, options);
        at = end;
    }
    // The text is the caller's: the iterator must not keep pointing at it.
    ubrk_setText(words, NULL, 0, &status);

done:
    free(units);
    free(offsets);
    free(analysis.folded.units);
    free(analysis.decomposed.units);
    free(analysis.stripped.units);
    free(analysis.composed.units);
    free(analysis.stem.units);
    free(analysis.stem_composed.units);
    free(analysis.token.bytes);
    free(analysis.stem_bytes.bytes);
    return result;
}

void replica_language_slot(const char *language, char into[REPLICA_LANGUAGE_SLOT]) {
    if (!language || strlen(language) >= REPLICA_LANGUAGE_SLOT) {
        into[0] = 0;
    } else {
        strcpy(into, language);
    }
}

static _Thread_local char document_language[REPLICA_LANGUAGE_SLOT];

void replica_analyzer_set_document_language(const char *language) { replica_language_slot(language, document_language); }

const char *replica_analyzer_document_language(void) { return document_language[0] ? document_language : NULL; }

int replica_analyzer_stems(const char *language) { return stemmer_for(language) != NULL || keeps_tone_marks(language); }

const char *replica_analyzer_icu_version(void) {
    static char version[64];
    if (!version[0]) {
        UVersionInfo icu, unicode;
        char icu_text[U_MAX_VERSION_STRING_LENGTH], unicode_text[U_MAX_VERSION_STRING_LENGTH];
        u_getVersion(icu);
        u_getUnicodeVersion(unicode);
        u_versionToString(icu, icu_text);
        u_versionToString(unicode, unicode_text);
        strcpy(version, "icu ");
        strcat(version, icu_text);
        strcat(version, ", unicode ");
        strcat(version, unicode_text);
    }
    return version;
}
