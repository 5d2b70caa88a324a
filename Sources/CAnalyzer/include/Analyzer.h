#ifndef REPLICA_ANALYZER_H
#define REPLICA_ANALYZER_H

#include <stddef.h>

// replica's text analyzer on ICU: text of any script into the words an index holds and a query looks
// for. Each word is Unicode NFKC with case folded (full-width forms, ligatures, ß as ss), accents
// folded from Latin and Greek letters, cut by ICU's word break rules with its dictionaries for Chinese,
// Japanese, Thai, Lao, Khmer and Burmese. A word of three or more Han, kana or Hangul characters is
// followed, with REPLICA_ANALYZE_BIGRAMS, by its overlapping pairs of characters at its own position
// (REPLICA_TOKEN_COLOCATED), so that a shorter word a query cuts differently is still found (农业 in
// 中国农业发展银行 when the dictionary keeps it whole; 김치 in 김치를).
//
// Every step is linear in the text's length: one pass from UTF-8 to UTF-16, one break iterator, each
// word normalized once.

#ifdef __cplusplus
extern "C" {
#endif

// The token is at the same position as the token before it (a pair of characters beside its word).
#define REPLICA_TOKEN_COLOCATED 1

// Also emit the pairs of characters of long Han, kana and Hangul words (for the index's side).
#define REPLICA_ANALYZE_BIGRAMS 1

// Every part of the text through ICU's break iterator, ASCII stretches too (which are otherwise cut
// without it, to the same words): for the tests that compare the two.
#define REPLICA_ANALYZE_ICU_ONLY 2

// Told each token: its folded UTF-8 bytes, and where its word lies in the text (byte offsets, the end
// excluded). A nonzero return stops the analysis and is returned.
typedef int (*replica_token_sink)(void *context, int flags, const char *token, int length, int start, int end);

// Analyzes `length` bytes of UTF-8 (bytes that are not UTF-8 count as U+FFFD, which is no word).
// Returns 0, the sink's nonzero return, or -1 when ICU failed (out of memory, its data missing).
int replica_analyze(const char *text, size_t length, int options, void *context, replica_token_sink sink);

// The analyzer's own steps on the calling thread so far (each unit of the text converted and looked at,
// each unit normalized, each pair made): a test compares them across lengths rather than timing them.
long long replica_analyzer_steps(void);

// The same, each word also stemmed for `language` (Snowball's name of it or its ISO 639 code: "english",
// "en", "de", "fr"; NULL or one Snowball has no stemmer for: none) and its stem, accents folded after
// stemming, at the word's position (REPLICA_TOKEN_COLOCATED) when it differs from the word. Words of
// scripts without spaces and numbers are not stemmed. In Vietnamese ("vi"), which Snowball does not
// stem, the word as written stands there instead, spelled as VNI types it ("mai1" for "mái").
int replica_analyze_in(const char *text, size_t length, int options, const char *language, void *context, replica_token_sink sink);

// The language the documents this thread gives FTS5's tokenizer next are stemmed for (`replica`
// tables without a language of their own): the writer sets an item's before its text is indexed or
// removed, since a removal must make the same tokens. NULL or "" for none. Queries are never stemmed
// by it: a query's stems are terms of their own.
void replica_analyzer_set_document_language(const char *language);
const char *replica_analyzer_document_language(void);

// A document's text analyzed ahead of its indexing, on another thread (the core that prepares rows),
// for FTS5's tokenizer to replay on the writer's instead of analyzing it there: the tokens it would
// make (REPLICA_ANALYZE_BIGRAMS, stemmed for `language` as replica_analyze_in does), with a copy of the
// text and the language to check that they are the ones indexed. NULL when out of memory or when the
// analysis failed (the tokenizer then analyzes the text itself).
typedef struct replica_preanalysis replica_preanalysis;
replica_preanalysis *replica_preanalyze(const char *text, size_t length, const char *language);
void replica_preanalysis_free(replica_preanalysis *analysis);
// Hands `analysis` (which the queue then owns; NULL stands for one that failed) to the next document
// text FTS5's tokenizer is given on the calling thread: the writer queues the analyses of a row's
// columns, in column order, just before it inserts the row, and discards what is left after it.
void replica_preanalysis_queue(replica_preanalysis *analysis);
void replica_preanalysis_discard(void);
// Replays the queue's first analysis to `sink` when it is of `length` bytes of `text` in `language`
// (counting its tokens as replica_analyze_in does with REPLICA_ANALYZE_COUNT_WORDS) and returns 1 with
// `*result` the sink's return; else discards the whole queue, which no longer matches what is indexed,
// and returns 0: the caller analyzes the text.
int replica_preanalysis_replay(const char *text, size_t length, const char *language, void *context, replica_token_sink sink, int *result);
// How many texts the calling thread has replayed so far (for tests).
long long replica_preanalysis_replayed(void);
// How many threads' working tables (kept by replica_preanalyze from one text to the next) have been
// freed as their threads ended, in the whole process (for tests).
long long replica_preanalysis_tables_freed(void);

// Whether the analyzer has forms of words for `language` beside them: Snowball's stems, or
// Vietnamese's words as written (spelled as VNI types them).
int replica_analyzer_stems(const char *language);

// Also count each token (a word or a stem) in the calling thread's vocabulary changes, when it counts
// (replica_vocabulary_count): FTS5's tokenizer analyzes a document with it when the document is indexed
// or removed.
#define REPLICA_ANALYZE_COUNT_WORDS 4

// The vocabulary of an index: how many documents hold each token that typos may be forgiven for (see
// replica_vocabulary_holds), kept by the index's writer in the transaction that writes the text. The
// writer sets the sign of what it does on its thread (1 while it adds documents, -1 while it removes
// them, 0 for neither), marks where each document begins, and drains the changes into its table before
// it commits. FTS5's tokenizer counts the documents it is given; the server's writer counts the lexemes
// of the tsvectors it writes and deletes that replica_vocabulary_holds keeps, without these counters.
#define REPLICA_VOCABULARY_SHORTEST 4
#define REPLICA_VOCABULARY_LONGEST 32

// Whether the vocabulary holds a token: 4 to 32 characters, no ASCII digit, not of a script written
// without typos forgiven (Han, kana, Hangul, Thai, Lao, Khmer, Burmese: by its first character).
int replica_vocabulary_holds(const char *word, int length);
void replica_vocabulary_count(int sign);
int replica_vocabulary_counting(void);
void replica_vocabulary_next_document(void);
// Counts a token for the current document (once a document); -1 when out of memory.
int replica_vocabulary_add(const char *word, int length);
// The same for a token the vocabulary holds (so not empty), with its replica_vocabulary_hash (worked out
// ahead).
int replica_vocabulary_add_held(const char *word, int length, unsigned int hash);
// Asks the processor for the memory where the token of this hash is counted, ahead of counting it.
void replica_vocabulary_prefetch(unsigned int hash);
unsigned int replica_vocabulary_hash(const char *word, int length);
typedef void (*replica_vocabulary_visit)(void *context, const char *word, int length, long long change);
// Calls `visit` (unless NULL: the changes are dropped) with each token whose documents changed, in the
// order of the SQLite vocabulary's key (first character, length in characters, bytes; unsorted when out
// of memory), and forgets them all.
void replica_vocabulary_drain(void *context, replica_vocabulary_visit visit);

// The language `length` bytes of UTF-8 are written in, by CLD2: its code (ISO 639-1 where there is one:
// "en", "de", "zh", "ja", "ko"; CLD2's own otherwise, "zh-Hant"), or NULL when it cannot tell; `reliable`
// (when not NULL) says whether CLD2 is sure (a few words rarely are). Plainly English text (ASCII, eight
// words or more, a fifth of them English function words, three different) is English, sure, without CLD2.
const char *replica_detect_language(const char *text, size_t length, int *reliable);
// How many texts replica_detect_language asked CLD2 about on the calling thread: a test compares it.
long long replica_language_detections(void);

// ICU's version, and its Unicode data's: what an index records, so that words made by another
// analyzer are known for what they are.
const char *replica_analyzer_icu_version(void);

#ifdef __cplusplus
}
#endif

#endif
