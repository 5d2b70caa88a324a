// A text's language by CLD2 (libcld2-dev), behind a C function: CLD2 is C++.
#include <cstdio>
#include <cstddef>
#include <cld2/public/compact_lang_det.h>
#include <cld2/internal/lang_script.h>

#include "Analyzer.h"

extern "C" const char *replica_detect_language(const char *text, size_t length, int *reliable) {
    bool is_reliable = false;
    int valid_prefix = 0;
    int bytes = length > (size_t)(1 << 30) ? (1 << 30) : (int)length;
    // Text already checked as UTF-8 by the caller's kind is not assumed: the CheckUTF8 form stops at a bad byte.
    CLD2::Language language = CLD2::DetectLanguageCheckUTF8(text, bytes, true, &is_reliable, &valid_prefix);
    if (reliable) *reliable = is_reliable ? 1 : 0;
    if (language == CLD2::UNKNOWN_LANGUAGE) return NULL;
    return CLD2::LanguageCode(language);
}
