// A text's language by CLD2 (libcld2-dev), behind a C function: CLD2 is C++.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <cld2/public/compact_lang_det.h>
#include <cld2/internal/lang_script.h>

#include "Analyzer.h"

namespace {

// Common English function words, less those that other languages written in Latin letters use most as
// their own ("in", "an", "was", "on", "by", "for", "can": German, Dutch, Danish, Turkish…). Those left
// that another language has too (Dutch "is" and "of", Polish "to", Tagalog "at") are kept from telling
// its texts English by the thresholds: three different words, a fifth of all.
constexpr const char *englishWords[] = {
    "and", "any", "are", "at", "be", "been", "being", "but", "could", "does", "each", "from", "has", "have",
    "his", "how", "if", "into", "is", "it", "its", "more", "must", "not", "of", "only", "or", "other", "our",
    "she", "should", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "were", "what", "when", "where", "which", "who", "with", "would", "you", "your"};
constexpr size_t englishCount = sizeof englishWords / sizeof *englishWords;
static_assert(englishCount <= 64, "one bit of a word each");

// A lowercase word of up to 8 letters as one number, its letters from the high byte down.
uint64_t packed(const char *word, size_t length) {
    uint64_t key = 0;
    for (size_t i = 0; i < length; i++) key = (key << 8) | (unsigned char)word[i];
    return key;
}

// The words as sorted keys for a binary search; a word's place among them is its bit among those seen.
struct EnglishKeys {
    std::array<uint64_t, englishCount> keys;
    EnglishKeys() {
        for (size_t i = 0; i < englishCount; i++) keys[i] = packed(englishWords[i], strlen(englishWords[i]));
        std::sort(keys.begin(), keys.end());
    }
};

// Whether a text is English beyond doubt, told without CLD2: ASCII only, at least 8 words, and at least
// a fifth of them function words of English, 3 of them different. Words are runs of letters, so code
// and paths of English words count too (and are stemmed as English). CLD2 costs about 15 µs for a
// paragraph's sample, this about one. On 100,000 paragraphs of Debian's linux-doc it says English for
// 31 % (CLD2 said English, sure, for every one of them); of 177,000 paragraphs of Debian's man pages in
// 18 other languages and 22,000 items and questions of the multilingual sets, for their English ones
// only; with their accents taken away, for one Vietnamese sentence that names two English book titles
// (docs/benchmarks/indexing.md, 2026-12-07, ninth stop).
bool isPlainlyEnglish(const char *text, size_t length) {
    static const EnglishKeys english;
    size_t words = 0, hits = 0, distinct = 0;
    uint64_t seen = 0;
    char word[8];
    size_t letters = 0;
    bool tooLong = false;
    for (size_t i = 0; i <= length; i++) {
        unsigned char c = i < length ? (unsigned char)text[i] : ' ';
        if (c >= 0x80) return false;
        unsigned char lower = c | 0x20;
        if (lower >= 'a' && lower <= 'z') {
            if (letters < sizeof word) word[letters++] = (char)lower;
            else tooLong = true;
            continue;
        }
        if (!letters) continue;
        words++;
        if (!tooLong) {
            uint64_t key = packed(word, letters);
            auto found = std::lower_bound(english.keys.begin(), english.keys.end(), key);
            if (found != english.keys.end() && *found == key) {
                hits++;
                uint64_t bit = uint64_t(1) << (found - english.keys.begin());
                if (!(seen & bit)) {
                    seen |= bit;
                    distinct++;
                }
            }
        }
        letters = 0;
        tooLong = false;
    }
    return words >= 8 && distinct >= 3 && hits * 5 >= words;
}

// How many texts CLD2 was asked about on this thread: a test tells with it which texts were told without.
thread_local long long detections = 0;

}  // namespace

extern "C" long long replica_language_detections(void) { return detections; }

extern "C" const char *replica_detect_language(const char *text, size_t length, int *reliable) {
    if (text && isPlainlyEnglish(text, length)) {
        if (reliable) *reliable = 1;
        return "en";
    }
    detections++;
    bool is_reliable = false;
    int valid_prefix = 0;
    int bytes = length > (size_t)(1 << 30) ? (1 << 30) : (int)length;
    // Text already checked as UTF-8 by the caller's kind is not assumed: the CheckUTF8 form stops at a bad byte.
    CLD2::Language language = CLD2::DetectLanguageCheckUTF8(text, bytes, true, &is_reliable, &valid_prefix);
    if (reliable) *reliable = is_reliable ? 1 : 0;
    if (language == CLD2::UNKNOWN_LANGUAGE) return NULL;
    return CLD2::LanguageCode(language);
}
