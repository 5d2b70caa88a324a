// The encoder's attention, softmax, GELU and layer normalisation, where it spends its time outside its
// dense layers' products (a passage of 200 word pieces makes 2.9 million exponentials in attention and
// 1.8 million GELUs). Attention is here rather than in OpenBLAS: each head's products are too small for
// OpenBLAS to set up cheaply, and on a processor it does not recognise it takes its SSE3 kernels.
// Swift compiles for the baseline x86-64 and its loops of the same arithmetic ran four floats at a time
// at best; here the same polynomials run sixteen at a time on AVX-512 and eight on AVX2, chosen at run
// time, and one value at a time in plain C elsewhere.
//
// exp: x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by Cephes' polynomial of degree 6 for `expf`, 2^n put
// straight into the exponent bits, x clamped to the range of normal floats. erf: an odd polynomial of
// degree 13 over an even one of degree 8 (the rational form and coefficients XLA uses for float erf),
// x clamped to ±4, beyond which float erf is ±1. Both are within a few units in the last place. The
// polynomials are evaluated with fused multiply-adds (`fmaf` in plain C, which is one instruction where
// the processor has it), half the operations of a multiply and an add; every path does the same
// operations in the same order, so they agree to the bit but for the order of a row's sum. Attention
// divides each row's weighted values by the exponentials' sum at the end, rather than each weight.

#pragma STDC FP_CONTRACT OFF

#include "CVectorKernels.h"
#include <math.h>
#include <string.h>

#define EXP_LOWEST -87.3f
#define EXP_HIGHEST 88.3f
#define LOG2E 1.44269504088896341f
#define ROUNDER 12582912.0f   /* 1.5 × 2^23: adding it rounds to a whole number, left in the low bits */
#define LN2_HIGH 0.693359375f
#define LN2_LOW -2.12194440e-4f
#define EXP_P0 1.9875691500e-4f
#define EXP_P1 1.3981999507e-3f
#define EXP_P2 8.3334519073e-3f
#define EXP_P3 4.1665795894e-2f
#define EXP_P4 1.6666665459e-1f
#define EXP_P5 5.0000001201e-1f
#define ERF_P0 -2.72614225801306e-10f
#define ERF_P1 2.77068142495902e-08f
#define ERF_P2 -2.10102402082508e-06f
#define ERF_P3 -5.69250639462346e-05f
#define ERF_P4 -7.34990630326855e-04f
#define ERF_P5 -2.95459980854025e-03f
#define ERF_P6 -1.60960333262415e-02f
#define ERF_Q0 -1.45660718464996e-05f
#define ERF_Q1 -2.13374055278905e-04f
#define ERF_Q2 -1.68282697438203e-03f
#define ERF_Q3 -7.37332916720468e-03f
#define ERF_Q4 -1.42647390514189e-02f
#define SQRT_HALF 0.70710678118654752f
/* The most rows of scores attention computes at a time (8 on AVX-512, 4 on AVX2). */
#define ATTENTION_ROWS 8

static inline float exp_one(float value) {
    float x = value < EXP_LOWEST ? EXP_LOWEST : (value > EXP_HIGHEST ? EXP_HIGHEST : value);
    float shifted = fmaf(x, LOG2E, ROUNDER);
    float n = shifted - ROUNDER;
    float r = fmaf(n, -LN2_LOW, fmaf(n, -LN2_HIGH, x));
    float p = fmaf(r, EXP_P0, EXP_P1);
    p = fmaf(p, r, EXP_P2);
    p = fmaf(p, r, EXP_P3);
    p = fmaf(p, r, EXP_P4);
    p = fmaf(p, r, EXP_P5);
    float y = fmaf(p, r * r, r) + 1;
    int32_t bits;
    memcpy(&bits, &shifted, 4);
    bits = (int32_t)((uint32_t)(bits - 0x4B400000 + 127) << 23);
    float scale;
    memcpy(&scale, &bits, 4);
    return y * scale;
}

static inline float erf_one(float value) {
    float x = value < -4 ? -4 : (value > 4 ? 4 : value);
    float x2 = x * x;
    float p = fmaf(x2, ERF_P0, ERF_P1);
    p = fmaf(x2, p, ERF_P2);
    p = fmaf(x2, p, ERF_P3);
    p = fmaf(x2, p, ERF_P4);
    p = fmaf(x2, p, ERF_P5);
    p = fmaf(x2, p, ERF_P6);
    float q = fmaf(x2, ERF_Q0, ERF_Q1);
    q = fmaf(x2, q, ERF_Q2);
    q = fmaf(x2, q, ERF_Q3);
    q = fmaf(x2, q, ERF_Q4);
    return x * p / q;
}

static inline float gelu_one(float x) {
    float half = 0.5f * x;
    return fmaf(half, erf_one(x * SQRT_HALF), half);
}

float replica_exp(float x) { return exp_one(x); }
float replica_erf(float x) { return erf_one(x); }

void replica_gelu_plain(float *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = gelu_one(x[i]);
}

void replica_softmax_rows_plain(float *x, size_t rows, size_t width) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * width;
        float largest = -INFINITY, sum = 0;
        for (size_t c = 0; c < width; c++) largest = row[c] > largest ? row[c] : largest;
        for (size_t c = 0; c < width; c++) { row[c] = exp_one(row[c] - largest); sum += row[c]; }
        float inverse = 1 / sum;
        for (size_t c = 0; c < width; c++) row[c] *= inverse;
    }
}

size_t replica_attention_scratch(size_t n, size_t size) {
    size_t padded = (n + 31) / 32 * 32;  /* two vectors of the widest path */
    return (size + ATTENTION_ROWS) * padded;
}

void replica_attention_plain(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                             float *out, size_t outStride, float *scratch) {
    for (size_t i = 0; i < n; i++) {
        const float *query = q + i * stride;
        for (size_t j = 0; j < n; j++) {
            float sum = 0;
            for (size_t d = 0; d < size; d++) sum = fmaf(query[d], k[j * stride + d], sum);
            scratch[j] = sum * scale;
        }
        float largest = -INFINITY, total = 0;
        for (size_t j = 0; j < n; j++) largest = scratch[j] > largest ? scratch[j] : largest;
        for (size_t j = 0; j < n; j++) { scratch[j] = exp_one(scratch[j] - largest); total += scratch[j]; }
        float inverse = 1 / total;
        for (size_t c = 0; c < size; c++) {
            float sum = 0;
            for (size_t j = 0; j < n; j++) sum = fmaf(scratch[j], v[j * stride + c], sum);
            out[i * outStride + c] = sum * inverse;
        }
    }
}

void replica_layer_norm_plain(float *x, size_t rows, size_t width, const float *gain, const float *bias) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * width;
        float sum = 0, variance = 0;
        for (size_t c = 0; c < width; c++) sum += row[c];
        float mean = sum / (float)width;
        for (size_t c = 0; c < width; c++) variance += (row[c] - mean) * (row[c] - mean);
        float inverse = 1 / sqrtf(variance / (float)width + 1e-12f);
        for (size_t c = 0; c < width; c++) row[c] = (row[c] - mean) * inverse * gain[c] + bias[c];
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

// The vector forms, written once for both widths (ActivationKernels.h), the tails one value at a time.
#define ACT_TARGET __attribute__((target("avx512f,avx512dq,avx2,fma")))
#define ACT_NAME(name) name##_avx512
#define ACT_WIDTH 16
#define VF __m512
#define VI __m512i
#define V_SET1(v) _mm512_set1_ps(v)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps(p, v)
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_MUL _mm512_mul_ps
#define V_FMA _mm512_fmadd_ps
#define V_DIV _mm512_div_ps
#define V_MIN _mm512_min_ps
#define V_MAX _mm512_max_ps
#define V_BITS(v) _mm512_castps_si512(v)
#define V_FLOATS(v) _mm512_castsi512_ps(v)
#define VI_SET1(v) _mm512_set1_epi32(v)
#define VI_ADD _mm512_add_epi32
#define VI_SUB _mm512_sub_epi32
#define VI_SHIFT_LEFT(v, n) _mm512_slli_epi32(v, n)
#define V_REDUCE_MAX(v) _mm512_reduce_max_ps(v)
#define V_REDUCE_ADD(v) _mm512_reduce_add_ps(v)
#include "ActivationKernels.h"
#undef ACT_TARGET
#undef ACT_NAME
#undef ACT_WIDTH
#undef VF
#undef VI
#undef V_SET1
#undef V_LOAD
#undef V_STORE
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_FMA
#undef V_DIV
#undef V_MIN
#undef V_MAX
#undef V_BITS
#undef V_FLOATS
#undef VI_SET1
#undef VI_ADD
#undef VI_SUB
#undef VI_SHIFT_LEFT
#undef V_REDUCE_MAX
#undef V_REDUCE_ADD

__attribute__((target("avx2,fma")))
static inline float reduce_max_avx2(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
}

__attribute__((target("avx2,fma")))
static inline float reduce_add_avx2(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

#define ACT_TARGET __attribute__((target("avx2,fma")))
#define ACT_NAME(name) name##_avx2
#define ACT_WIDTH 8
#define VF __m256
#define VI __m256i
#define V_SET1(v) _mm256_set1_ps(v)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_FMA _mm256_fmadd_ps
#define V_DIV _mm256_div_ps
#define V_MIN _mm256_min_ps
#define V_MAX _mm256_max_ps
#define V_BITS(v) _mm256_castps_si256(v)
#define V_FLOATS(v) _mm256_castsi256_ps(v)
#define VI_SET1(v) _mm256_set1_epi32(v)
#define VI_ADD _mm256_add_epi32
#define VI_SUB _mm256_sub_epi32
#define VI_SHIFT_LEFT(v, n) _mm256_slli_epi32(v, n)
#define V_REDUCE_MAX(v) reduce_max_avx2(v)
#define V_REDUCE_ADD(v) reduce_add_avx2(v)
#include "ActivationKernels.h"

static int has_avx512(void) { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"); }
static int has_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

void replica_gelu(float *x, size_t count) {
    if (has_avx512()) gelu_avx512(x, count);
    else if (has_avx2()) gelu_avx2(x, count);
    else replica_gelu_plain(x, count);
}

void replica_softmax_rows(float *x, size_t rows, size_t width) {
    if (has_avx512()) softmax_rows_avx512(x, rows, width);
    else if (has_avx2()) softmax_rows_avx2(x, rows, width);
    else replica_softmax_rows_plain(x, rows, width);
}

void replica_attention(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                       float *out, size_t outStride, float *scratch) {
    if (size % 16 == 0 && has_avx512()) attention_avx512(q, k, v, stride, n, size, scale, out, outStride, scratch);
    else if (size % 8 == 0 && has_avx2()) attention_avx2(q, k, v, stride, n, size, scale, out, outStride, scratch);
    else replica_attention_plain(q, k, v, stride, n, size, scale, out, outStride, scratch);
}

void replica_layer_norm(float *x, size_t rows, size_t width, const float *gain, const float *bias) {
    if (has_avx512()) layer_norm_avx512(x, rows, width, gain, bias);
    else if (has_avx2()) layer_norm_avx2(x, rows, width, gain, bias);
    else replica_layer_norm_plain(x, rows, width, gain, bias);
}

#else

void replica_layer_norm(float *x, size_t rows, size_t width, const float *gain, const float *bias) {
    replica_layer_norm_plain(x, rows, width, gain, bias);
}
void replica_gelu(float *x, size_t count) { replica_gelu_plain(x, count); }
void replica_softmax_rows(float *x, size_t rows, size_t width) { replica_softmax_rows_plain(x, rows, width); }
void replica_attention(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                       float *out, size_t outStride, float *scratch) {
    replica_attention_plain(q, k, v, stride, n, size, scale, out, outStride, scratch);
}

#endif
