// The scan behind semantic search: a query against every stored vector. Swift compiles for the baseline
// x86-64 (SSE2) and cannot pick instructions per function at run time; C can, and AVX2 scans 100,000
// vectors of 384 values about six times faster than SSE2 here (2.3 ms against 14: BENCHMARKS.md,
// "Latency at 100,000 items").

#include "CVectorKernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2,fma")))
static void scaled_dots_avx2(const float *query, const int8_t *values, const float *scales, size_t rows,
                             size_t dimensions, float *out) {
    for (size_t r = 0; r < rows; r++) {
        const int8_t *row = values + r * dimensions;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        size_t i = 0;
        for (; i + 32 <= dimensions; i += 32) {
#define REPLICA_STEP(acc, at) \
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(row + (at))))), \
                                  _mm256_loadu_ps(query + (at)), acc)
            REPLICA_STEP(a0, i);
            REPLICA_STEP(a1, i + 8);
            REPLICA_STEP(a2, i + 16);
            REPLICA_STEP(a3, i + 24);
#undef REPLICA_STEP
        }
        __m256 a = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
        float sum = _mm_cvtss_f32(h);
        for (; i < dimensions; i++) sum += query[i] * (float)row[i];
        out[r] = sum * scales[r];
    }
}

// Sign-extends four int8 lanes, already widened to int16 in pairs, to floats.
static inline __m128 floats_of_low(__m128i words) { return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(words, words), 16)); }
static inline __m128 floats_of_high(__m128i words) { return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(words, words), 16)); }

static void scaled_dots_sse2(const float *query, const int8_t *values, const float *scales, size_t rows,
                             size_t dimensions, float *out) {
    for (size_t r = 0; r < rows; r++) {
        const int8_t *row = values + r * dimensions;
        __m128 a0 = _mm_setzero_ps(), a1 = _mm_setzero_ps(), a2 = _mm_setzero_ps(), a3 = _mm_setzero_ps();
        size_t i = 0;
        for (; i + 16 <= dimensions; i += 16) {
            __m128i bytes = _mm_loadu_si128((const __m128i *)(row + i));
            __m128i low = _mm_srai_epi16(_mm_unpacklo_epi8(bytes, bytes), 8);
            __m128i high = _mm_srai_epi16(_mm_unpackhi_epi8(bytes, bytes), 8);
            a0 = _mm_add_ps(a0, _mm_mul_ps(floats_of_low(low), _mm_loadu_ps(query + i)));
            a1 = _mm_add_ps(a1, _mm_mul_ps(floats_of_high(low), _mm_loadu_ps(query + i + 4)));
            a2 = _mm_add_ps(a2, _mm_mul_ps(floats_of_low(high), _mm_loadu_ps(query + i + 8)));
            a3 = _mm_add_ps(a3, _mm_mul_ps(floats_of_high(high), _mm_loadu_ps(query + i + 12)));
        }
        __m128 h = _mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
        float sum = _mm_cvtss_f32(h);
        for (; i < dimensions; i++) sum += query[i] * (float)row[i];
        out[r] = sum * scales[r];
    }
}

void replica_scaled_dots(const float *query, const int8_t *values, const float *scales, size_t rows,
                         size_t dimensions, float *out) {
    // A load and a test: the processor's features are read once, when the program starts.
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) scaled_dots_avx2(query, values, scales, rows, dimensions, out);
    else scaled_dots_sse2(query, values, scales, rows, dimensions, out);
}

void replica_scaled_dots_baseline(const float *query, const int8_t *values, const float *scales, size_t rows,
                                  size_t dimensions, float *out) {
    scaled_dots_sse2(query, values, scales, rows, dimensions, out);
}

#else

void replica_scaled_dots(const float *query, const int8_t *values, const float *scales, size_t rows,
                         size_t dimensions, float *out) {
    replica_scaled_dots_baseline(query, values, scales, rows, dimensions, out);
}

void replica_scaled_dots_baseline(const float *query, const int8_t *values, const float *scales, size_t rows,
                                  size_t dimensions, float *out) {
    for (size_t r = 0; r < rows; r++) {
        const int8_t *row = values + r * dimensions;
        float sum = 0;
        for (size_t i = 0; i < dimensions; i++) sum += query[i] * (float)row[i];
        out[r] = sum * scales[r];
    }
}

#endif
