// The encoder's dense layers in int8: weights quantised once per output (symmetric, [-127, 127]),
// activations per row (asymmetric, [0, 127] with a zero point), products summed exactly in int32, then
// scaled back to floats. AVX2 has no int8 dot product that sums into int32 at once: `vpmaddubsw`
// multiplies unsigned by signed bytes and adds pairs into int16 with saturation, then `vpmaddwd` by ones
// widens to int32. Activations of 7 bits keep the int16 pairs exact (2 × 127 × 127 = 32,258 < 32,767).
// AVX-512 VNNI has that product in one instruction without saturation (`vpdpbusd`: 64 byte pairs summed
// by fours into 16 int32 lanes); it takes the same 7-bit activations, so both paths sum the same integers.
// AVX-VNNI (processors with AVX2 but no AVX-512, and some with both) has the same instruction on 256-bit
// registers: the AVX2 path's loops with each pair of instructions and its addition made one.

#include "CVectorKernels.h"
#include <math.h>
#include <string.h>

enum { QUAD = 4, BLOCK = 16, STEPS = 126, TOP = 127 };

size_t replica_int8_padded_inputs(size_t inputs) { return (inputs + QUAD - 1) / QUAD * QUAD; }
size_t replica_int8_padded_outputs(size_t outputs) { return (outputs + BLOCK - 1) / BLOCK * BLOCK; }

// Where weight (output o, input k) sits in the packed matrix: blocks of 16 outputs, within a block the
// inputs in quads, within a quad two halves of 8 outputs, each output's 4 bytes together. One 32-byte
// load then holds 4 inputs of 8 outputs, what `vpmaddubsw` against 4 broadcast activation bytes needs.
static size_t packed_index(size_t o, size_t k, size_t paddedInputs) {
    return (o / BLOCK) * BLOCK * paddedInputs + (k / QUAD) * (BLOCK * QUAD) + ((o % BLOCK) / 8) * 32 + (o % 8) * QUAD + k % QUAD;
}

void replica_int8_pack(const float *weights, size_t outputs, size_t inputs, int8_t *packed, float *scales, int32_t *sums) {
    size_t kp = replica_int8_padded_inputs(inputs), op = replica_int8_padded_outputs(outputs);
    memset(packed, 0, op * kp);
    for (size_t o = 0; o < op; o++) {
        if (o >= outputs) { scales[o] = 0; sums[o] = 0; continue; }
        const float *row = weights + o * inputs;
        float largest = 0;
        for (size_t k = 0; k < inputs; k++) largest = fmaxf(largest, fabsf(row[k]));
        float scale = largest > 0 ? largest / 127 : 1;
        int32_t sum = 0;
        for (size_t k = 0; k < inputs; k++) {
            // Rounded to the nearest integer, ties to even, as lrintf rounds by default, without its
            // call (a third of a model's load): the quotient lies within ±127 (a weight that is not a
            // finite number was refused before), far below 2^22, where adding and taking away
            // 1.5 × 2^23 leaves it rounded.
            float quotient = row[k] / scale;
            float shifted = quotient + 12582912.0f;
            int32_t v = (int32_t)(shifted - 12582912.0f);
            v = v < -127 ? -127 : v > 127 ? 127 : v;
            packed[packed_index(o, k, kp)] = (int8_t)v;
            sum += v;
        }
        scales[o] = scale;
        sums[o] = sum;
    }
}

// A row's range, widened to hold 0, mapped onto [0, 127]: value ≈ scale × (q − zero). The span is cut in
// 126 steps rather than 127, so that rounding both ends up stays within 127 and no value is clamped.
static void row_parameters(float lowest, float highest, float *scale, int32_t *zero) {
    lowest = fminf(lowest, 0);
    highest = fmaxf(highest, 0);
    float s = (highest - lowest) / STEPS;
    if (!(s > 0) || !isfinite(s)) s = 1;
    *scale = s;
    *zero = (int32_t)lrintf(-lowest / s);
}

static uint8_t clamp_level(long v) { return (uint8_t)(v < 0 ? 0 : v > TOP ? TOP : v); }

// The epilogue on `count` complete rows of `width` outputs.
static void finish_rows(float *rows, size_t count, size_t width, replica_int8_epilogue epilogue) {
    if (epilogue.kind == REPLICA_EPILOGUE_LAYER_NORM) replica_layer_norm(rows, count, width, epilogue.gain, epilogue.bias);
    else if (epilogue.kind == REPLICA_EPILOGUE_GELU) replica_gelu(rows, count * width);
    if (epilogue.maxima) replica_column_maxima(rows, count, width, epilogue.maxima);
}

// A row with the outlier columns zeroed, in `copy` (which holds `inputs` floats): what is quantised.
static const float *without_outliers(const float *row, size_t inputs, replica_int8_outliers outliers, float *copy) {
    if (outliers.count == 0) return row;
    memcpy(copy, row, inputs * sizeof(float));
    for (size_t j = 0; j < outliers.count; j++) copy[outliers.columns[j]] = 0;
    return copy;
}

static void quantize_rows_plain(const float *x, size_t rows, size_t inputs, replica_int8_outliers outliers, float *copy,
                                uint8_t *q, float *scales, int32_t *zeros) {
    size_t kp = replica_int8_padded_inputs(inputs);
    for (size_t r = 0; r < rows; r++) {
        const float *row = without_outliers(x + r * inputs, inputs, outliers, copy);
        float lowest = 0, highest = 0;
        for (size_t k = 0; k < inputs; k++) { lowest = fminf(lowest, row[k]); highest = fmaxf(highest, row[k]); }
        row_parameters(lowest, highest, &scales[r], &zeros[r]);
        float inverse = 1 / scales[r];
        uint8_t *out = q + r * kp;
        for (size_t k = 0; k < inputs; k++) out[k] = clamp_level(lrintf(row[k] * inverse) + zeros[r]);
        for (size_t k = inputs; k < kp; k++) out[k] = 0;
    }
}

static void products_plain(const float *x, const uint8_t *q, const float *rowScales, const int32_t *zeros, size_t rows, size_t inputs,
                           const int8_t *packed, const float *scales, const int32_t *sums, const float *bias, size_t outputs,
                           replica_int8_outliers outliers, const float *residual, float *out, replica_int8_epilogue epilogue) {
    size_t kp = replica_int8_padded_inputs(inputs), op = replica_int8_padded_outputs(outputs);
    for (size_t r = 0; r < rows; r++) {
        for (size_t o = 0; o < outputs; o++) {
            int32_t sum = 0;
            for (size_t k = 0; k < inputs; k++) sum += (int32_t)q[r * kp + k] * packed[packed_index(o, k, kp)];
            float value = (float)(sum - zeros[r] * sums[o]) * (rowScales[r] * scales[o]);
            // Each outlier column's product added by a fused multiply-add, as the vector paths' `vfmadd` adds
            // it: a product rounded before its addition gives other vectors.
            for (size_t j = 0; j < outliers.count; j++) value = fmaf(x[r * inputs + outliers.columns[j]], outliers.weights[j * op + o], value);
            value += bias[o];
            if (residual) value += residual[r * outputs + o];
            out[r * outputs + o] = value;
        }
        finish_rows(out + r * outputs, 1, outputs, epilogue);
    }
}

void replica_column_maxima_plain(const float *x, size_t rows, size_t width, float *maxima) {
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < width; k++) maxima[k] = fmaxf(maxima[k], fabsf(x[r * width + k]));
}

#if defined(__x86_64__)
#include <immintrin.h>

// Widens [lowest, highest] to hold the `count` values at `p`.
__attribute__((target("avx2,fma")))
static void widen_range_avx2(const float *p, size_t count, float *lowest, float *highest) {
    __m256 low = _mm256_set1_ps(*lowest), high = _mm256_set1_ps(*highest);
    size_t k = 0;
    for (; k + 8 <= count; k += 8) {
        __m256 v = _mm256_loadu_ps(p + k);
        low = _mm256_min_ps(low, v);
        high = _mm256_max_ps(high, v);
    }
    float lows[8], highs[8];
    _mm256_storeu_ps(lows, low);
    _mm256_storeu_ps(highs, high);
    for (int i = 0; i < 8; i++) { *lowest = fminf(*lowest, lows[i]); *highest = fmaxf(*highest, highs[i]); }
    for (; k < count; k++) { *lowest = fminf(*lowest, p[k]); *highest = fmaxf(*highest, p[k]); }
}

// A row's scale and zero from its range, taken around the outlier columns (in increasing order).
__attribute__((target("avx2,fma")))
static void row_range_parameters_avx2(const float *row, size_t inputs, replica_int8_outliers outliers, float *scale, int32_t *zero) {
    float lowest = 0, highest = 0;
    size_t from = 0;
    for (size_t j = 0; j <= outliers.count; j++) {
        size_t to = j < outliers.count ? outliers.columns[j] : inputs;
        if (to > from) widen_range_avx2(row + from, to - from, &lowest, &highest);
        from = to + 1;
    }
    row_parameters(lowest, highest, scale, zero);
}

// A row's levels from column `k` on, one at a time (the vector loops leave the last few), then zeros
// to the padded width, and the outlier columns set to the row's zero.
static void finish_row_levels(const float *row, size_t k, size_t inputs, size_t kp, float inverse, int32_t zero,
                              replica_int8_outliers outliers, uint8_t *out) {
    for (; k < inputs; k++) out[k] = clamp_level(lrintf(row[k] * inverse) + zero);
    for (; k < kp; k++) out[k] = 0;
    for (size_t j = 0; j < outliers.count; j++) out[outliers.columns[j]] = (uint8_t)zero;
}

// As quantize_rows_plain, without copying the row: its range is taken around the outlier columns (in
// increasing order), and those columns' levels are set to the row's zero afterwards.
__attribute__((target("avx2,fma")))
static void quantize_rows_avx2(const float *x, size_t rows, size_t inputs, replica_int8_outliers outliers,
                               uint8_t *q, float *scales, int32_t *zeros) {
    size_t kp = replica_int8_padded_inputs(inputs);
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * inputs;
        row_range_parameters_avx2(row, inputs, outliers, &scales[r], &zeros[r]);
        float inverse = 1 / scales[r];
        __m256 inverses = _mm256_set1_ps(inverse);
        __m256i zero = _mm256_set1_epi32(zeros[r]), top = _mm256_set1_epi32(TOP), bottom = _mm256_setzero_si256();
        uint8_t *out = q + r * kp;
        size_t k = 0;
        for (; k + 8 <= inputs; k += 8) {
            // Rounds to nearest even, as lrintf does in the plain path.
            __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + k), inverses)), zero);
            v = _mm256_min_epi32(_mm256_max_epi32(v, bottom), top);
            __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            _mm_storel_epi64((__m128i *)(out + k), _mm_packus_epi16(words, words));
        }
        finish_row_levels(row, k, inputs, kp, inverse, zeros[r], outliers, out);
    }
}

// One row's sums for 8 outputs, scaled back, with its outlier columns' products, the bias and the
// residual (when there is one) added: (sum − zero × Σw) × rowScale × scale + Σ x[column] × weight + bias
// + residual, stored in `out`. `residual` and `out` point at the row's 8 outputs.
__attribute__((target("avx2,fma")))
static inline void finish_avx2(__m256i sum, float rowScale, int32_t zero, const float *scales, const int32_t *sums, const float *bias,
                               const float *row, replica_int8_outliers outliers, size_t paddedOutputs, size_t o,
                               const float *residual, float *out) {
    __m256i exact = _mm256_sub_epi32(sum, _mm256_mullo_epi32(_mm256_set1_epi32(zero), _mm256_loadu_si256((const __m256i *)(sums + o))));
    __m256 factor = _mm256_mul_ps(_mm256_set1_ps(rowScale), _mm256_loadu_ps(scales + o));
    __m256 value = _mm256_mul_ps(_mm256_cvtepi32_ps(exact), factor);
    for (size_t j = 0; j < outliers.count; j++)
        value = _mm256_fmadd_ps(_mm256_set1_ps(row[outliers.columns[j]]), _mm256_loadu_ps(outliers.weights + j * paddedOutputs + o), value);
    value = _mm256_add_ps(value, _mm256_loadu_ps(bias + o));
    if (residual) value = _mm256_add_ps(value, _mm256_loadu_ps(residual));
    _mm256_storeu_ps(out, value);
}

__attribute__((target("avx2,fma")))
static void column_maxima_avx2(const float *x, size_t rows, size_t width, float *maxima) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * width;
        size_t k = 0;
        for (; k + 8 <= width; k += 8)
            _mm256_storeu_ps(maxima + k, _mm256_max_ps(_mm256_loadu_ps(maxima + k), _mm256_and_ps(_mm256_loadu_ps(row + k), magnitude)));
        for (; k < width; k++) maxima[k] = fmaxf(maxima[k], fabsf(row[k]));
    }
}

static inline int32_t load4(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }

#define REPLICA_PRODUCT(acc, x, w) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), ones))

// Four rows against one block of 16 outputs: eight int32 accumulators, 32 products per instruction pair.
__attribute__((target("avx2,fma")))
static void block4_avx2(const uint8_t *q, size_t kp, const int8_t *block, __m256i sums[8]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    const uint8_t *a0 = q, *a1 = q + kp, *a2 = q + 2 * kp, *a3 = q + 3 * kp;
    for (size_t k = 0; k < kp; k += QUAD, block += BLOCK * QUAD) {
        __m256i w0 = _mm256_loadu_si256((const __m256i *)block), w1 = _mm256_loadu_si256((const __m256i *)(block + 32));
        __m256i x = _mm256_set1_epi32(load4(a0 + k));
        REPLICA_PRODUCT(c0, x, w0); REPLICA_PRODUCT(c1, x, w1);
        x = _mm256_set1_epi32(load4(a1 + k));
        REPLICA_PRODUCT(c2, x, w0); REPLICA_PRODUCT(c3, x, w1);
        x = _mm256_set1_epi32(load4(a2 + k));
        REPLICA_PRODUCT(c4, x, w0); REPLICA_PRODUCT(c5, x, w1);
        x = _mm256_set1_epi32(load4(a3 + k));
        REPLICA_PRODUCT(c6, x, w0); REPLICA_PRODUCT(c7, x, w1);
    }
    sums[0] = c0; sums[1] = c1; sums[2] = c2; sums[3] = c3; sums[4] = c4; sums[5] = c5; sums[6] = c6; sums[7] = c7;
}

__attribute__((target("avx2,fma")))
static void block1_avx2(const uint8_t *q, size_t kp, const int8_t *block, __m256i sums[2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0;
    for (size_t k = 0; k < kp; k += QUAD, block += BLOCK * QUAD) {
        __m256i x = _mm256_set1_epi32(load4(q + k));
        REPLICA_PRODUCT(c0, x, _mm256_loadu_si256((const __m256i *)block));
        REPLICA_PRODUCT(c1, x, _mm256_loadu_si256((const __m256i *)(block + 32)));
    }
    sums[0] = c0; sums[1] = c1;
}

#undef REPLICA_PRODUCT

#define REPLICA_AVX_VNNI __attribute__((target("avx2,fma,avxvnni")))
#define REPLICA_PRODUCT(acc, x, w) acc = _mm256_dpbusd_avx_epi32(acc, x, w)

// Six rows against one block of 16 outputs with `vpdpbusd`, the AVX2 path's sums: twelve accumulators,
// two weight registers and one broadcast fill the 16 registers (AVX2's pair of instructions needs two
// more, so it takes four rows), and each weight load feeds six products rather than four.
REPLICA_AVX_VNNI
static void block6_avx_vnni(const uint8_t *q, size_t kp, const int8_t *block, __m256i sums[12]) {
    __m256i c[12];
    for (int i = 0; i < 12; i++) c[i] = _mm256_setzero_si256();
    for (size_t k = 0; k < kp; k += QUAD, block += BLOCK * QUAD) {
        __m256i w0 = _mm256_loadu_si256((const __m256i *)block), w1 = _mm256_loadu_si256((const __m256i *)(block + 32));
        for (int r = 0; r < 6; r++) {
            __m256i x = _mm256_set1_epi32(load4(q + r * kp + k));
            REPLICA_PRODUCT(c[2 * r], x, w0); REPLICA_PRODUCT(c[2 * r + 1], x, w1);
        }
    }
    for (int i = 0; i < 12; i++) sums[i] = c[i];
}

#undef REPLICA_PRODUCT
#undef REPLICA_AVX_VNNI

// Each group of four rows against every block of 16 outputs in turn: a block's weights are read from
// the L1 cache four times over, the whole matrix from the L2 cache once per group, and each row's outputs
// are written in order, once (reading and writing them by blocks, a column of rows at a time, left the
// processor waiting on the memory behind them). With `dotProducts`, groups of six rows take AVX-VNNI's
// block; the last few rows, one at a time, still take AVX2's, which sums the same integers.
__attribute__((target("avx2,fma")))
static void products_avx2(const float *x, const uint8_t *q, const float *rowScales, const int32_t *zeros, size_t rows, size_t inputs,
                          const int8_t *packed, const float *scales, const int32_t *sums, const float *bias, size_t outputs,
                          replica_int8_outliers outliers, const float *residual, float *out, replica_int8_epilogue epilogue,
                          int dotProducts) {
    size_t kp = replica_int8_padded_inputs(inputs), op = replica_int8_padded_outputs(outputs);
    void (*blockRows)(const uint8_t *, size_t, const int8_t *, __m256i *) = dotProducts ? block6_avx_vnni : block4_avx2;
    size_t groupRows = dotProducts ? 6 : 4;
    for (size_t r = 0; r < rows; ) {
        size_t group = rows - r >= groupRows ? groupRows : 1;
        for (size_t o = 0; o < outputs; o += BLOCK) {
            const int8_t *block = packed + o * kp;
            __m256i acc[12];
            if (group > 1) blockRows(q + r * kp, kp, block, acc);
            else block1_avx2(q + r * kp, kp, block, acc);
            // A last block past the outputs is finished through a buffer.
            size_t width = outputs - o < BLOCK ? outputs - o : BLOCK;
            for (size_t g = 0; g < group; g++) {
                const float *in = x + (r + g) * inputs, *added = residual ? residual + (r + g) * outputs + o : NULL;
                float *target = out + (r + g) * outputs + o;
                float partial[BLOCK], partialResidual[BLOCK];
                if (width < BLOCK) {
                    if (added) {
                        memset(partialResidual, 0, sizeof partialResidual);
                        memcpy(partialResidual, added, width * sizeof(float));
                        added = partialResidual;
                    }
                    target = partial;
                }
                finish_avx2(acc[2 * g], rowScales[r + g], zeros[r + g], scales, sums, bias, in, outliers, op, o, added, target);
                finish_avx2(acc[2 * g + 1], rowScales[r + g], zeros[r + g], scales, sums, bias, in, outliers, op, o + 8,
                            added ? added + 8 : NULL, target + 8);
                if (width < BLOCK) memcpy(out + (r + g) * outputs + o, partial, width * sizeof(float));
            }
        }
        finish_rows(out + r * outputs, group, outputs, epilogue);
        r += group;
    }
}

#define REPLICA_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

// As finish_avx2 for one block of 16 outputs of each of a group's `group` rows: the same operations in
// the same order (so the two paths agree to the bit), with what the rows share read once: the block's
// scales, sums, bias and outlier weights (`picked` holds each row's values in the outlier columns, row
// after row). `mask` keeps a last block past the outputs from reading or writing beyond them.
REPLICA_VNNI
static inline void finish_block_vnni(const __m512i *acc, size_t group, const float *rowScales, const int32_t *zeros, const float *scales,
                                     const int32_t *sums, const float *bias, const float *picked, replica_int8_outliers outliers,
                                     size_t paddedOutputs, size_t o, const float *residual, float *out, size_t stride, __mmask16 mask) {
    enum { CHUNK = 8 };
    __m512i blockSums = _mm512_loadu_si512(sums + o);
    __m512 blockScales = _mm512_loadu_ps(scales + o);
    __m512 value[8];
    for (size_t g = 0; g < group; g++) {
        __m512i exact = _mm512_sub_epi32(acc[g * 2], _mm512_mullo_epi32(_mm512_set1_epi32(zeros[g]), blockSums));
        value[g] = _mm512_mul_ps(_mm512_cvtepi32_ps(exact), _mm512_mul_ps(_mm512_set1_ps(rowScales[g]), blockScales));
    }
    for (size_t first = 0; first < outliers.count; first += CHUNK) {
        size_t count = outliers.count - first < CHUNK ? outliers.count - first : CHUNK;
        __m512 weights[CHUNK];
        for (size_t j = 0; j < count; j++) weights[j] = _mm512_loadu_ps(outliers.weights + (first + j) * paddedOutputs + o);
        for (size_t g = 0; g < group; g++)
            for (size_t j = 0; j < count; j++)
                value[g] = _mm512_fmadd_ps(_mm512_set1_ps(picked[g * outliers.count + first + j]), weights[j], value[g]);
    }
    __m512 blockBias = _mm512_loadu_ps(bias + o);
    for (size_t g = 0; g < group; g++) {
        __m512 v = _mm512_add_ps(value[g], blockBias);
        if (residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, residual + g * stride));
        _mm512_mask_storeu_ps(out + g * stride, mask, v);
    }
}

// `rows` rows (at most 8) against `blocks` blocks of 16 outputs (at most 2): one 64-byte load holds a
// block's 4 inputs of its 16 outputs, each output's 4 bytes together (the packed layout), and `vpdpbusd`
// against the row's 4 activation bytes broadcast adds their 4 products into each output's lane. Called
// with constants, so the loops unroll and the accumulators stay in registers (16 + 2 + 1 of 32).
REPLICA_VNNI __attribute__((always_inline))
static inline void tile_vnni(const uint8_t *q, size_t kp, const int8_t *block, size_t rows, size_t blocks, __m512i acc[16]) {
    __m512i c[8][2];
    for (size_t r = 0; r < rows; r++) for (size_t b = 0; b < blocks; b++) c[r][b] = _mm512_setzero_si512();
    const int8_t *second = block + BLOCK * kp;
    for (size_t k = 0; k < kp; k += QUAD) {
        __m512i w[2];
        w[0] = _mm512_loadu_si512(block + k * BLOCK);
        if (blocks > 1) w[1] = _mm512_loadu_si512(second + k * BLOCK);
        for (size_t r = 0; r < rows; r++) {
            __m512i x = _mm512_set1_epi32(load4(q + r * kp + k));
            for (size_t b = 0; b < blocks; b++) c[r][b] = _mm512_dpbusd_epi32(c[r][b], x, w[b]);
        }
    }
    for (size_t r = 0; r < rows; r++) for (size_t b = 0; b < blocks; b++) acc[r * 2 + b] = c[r][b];
}

REPLICA_VNNI static void tile8x2_vnni(const uint8_t *q, size_t kp, const int8_t *block, __m512i acc[16]) { tile_vnni(q, kp, block, 8, 2, acc); }
REPLICA_VNNI static void tile8x1_vnni(const uint8_t *q, size_t kp, const int8_t *block, __m512i acc[16]) { tile_vnni(q, kp, block, 8, 1, acc); }
REPLICA_VNNI static void tile1x2_vnni(const uint8_t *q, size_t kp, const int8_t *block, __m512i acc[16]) { tile_vnni(q, kp, block, 1, 2, acc); }
REPLICA_VNNI static void tile1x1_vnni(const uint8_t *q, size_t kp, const int8_t *block, __m512i acc[16]) { tile_vnni(q, kp, block, 1, 1, acc); }

// Asks for the `step`-th share (`share` floats each) of the `count` floats at `p` to be brought into the
// second-level cache; nothing once the shares are done.
static inline void prefetch_share(const float *p, size_t count, size_t share, size_t step) {
    if (!p || step * share >= count) return;
    const char *line = (const char *)(p + step * share);
    const char *end = (const char *)(p + (count - step * share < share ? count : (step + 1) * share));
    // Every other line: the second-level cache's own prefetcher brings each line's pair.
    for (; line < end; line += 128) _mm_prefetch(line, _MM_HINT_T1);
}

// quantize_rows_avx2 sixteen floats at a time (the same levels: the same range, its outlier columns
// masked out rather than skipped, then rounding to nearest even and clamping).
REPLICA_VNNI static void quantize_rows_avx512(const float *x, size_t rows, size_t inputs, replica_int8_outliers outliers,
                                              uint8_t *q, float *scales, int32_t *zeros) {
    size_t kp = replica_int8_padded_inputs(inputs), chunks = (inputs + 15) / 16;
    // Which columns of each 16 count towards a row's range: all but the outlier columns (and those past
    // the row). A column left out reads as 0, which the range holds anyway.
    __mmask16 kept[chunks];
    for (size_t c = 0; c < chunks; c++) kept[c] = (__mmask16)(inputs - c * 16 >= 16 ? 0xFFFF : (1u << (inputs - c * 16)) - 1);
    for (size_t j = 0; j < outliers.count; j++) kept[outliers.columns[j] / 16] &= (__mmask16)~(1u << (outliers.columns[j] % 16));
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * inputs;
        __m512 low = _mm512_setzero_ps(), high = _mm512_setzero_ps();
        for (size_t c = 0; c < chunks; c++) {
            __m512 v = _mm512_maskz_loadu_ps(kept[c], row + c * 16);
            low = _mm512_min_ps(low, v);
            high = _mm512_max_ps(high, v);
        }
        row_parameters(_mm512_reduce_min_ps(low), _mm512_reduce_max_ps(high), &scales[r], &zeros[r]);
        float inverse = 1 / scales[r];
        __m512 inverses = _mm512_set1_ps(inverse);
        __m512i zero = _mm512_set1_epi32(zeros[r]), top = _mm512_set1_epi32(TOP), bottom = _mm512_setzero_si512();
        uint8_t *out = q + r * kp;
        size_t k = 0;
        for (; k + 16 <= inputs; k += 16) {
            __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + k), inverses)), zero);
            v = _mm512_min_epi32(_mm512_max_epi32(v, bottom), top);
            _mm_storeu_si128((__m128i *)(out + k), _mm512_cvtepi32_epi8(v));
        }
        finish_row_levels(row, k, inputs, kp, inverse, zeros[r], outliers, out);
    }
}

// As on AVX2, each group of rows against every block of outputs in turn; here groups of 8 rows against
// pairs of blocks (32 outputs; a last single block, or the last rows one at a time, in smaller tiles):
// each weight load feeds 8 products, each broadcast 2. Each group's rows are quantised just before its
// products, and the next group's rows and residual fetched into the cache meanwhile, so that the rows'
// floats, read again for the outlier columns, and their residual, read at the end, come from the cache
// rather than from memory: with the whole input quantised first, the last step waited on those loads.
REPLICA_VNNI
static void products_vnni(const float *x, uint8_t *q, float *rowScales, int32_t *zeros, size_t rows, size_t inputs,
                          const int8_t *packed, const float *scales, const int32_t *sums, const float *bias, size_t outputs,
                          replica_int8_outliers outliers, const float *residual, float *out, replica_int8_epilogue epilogue) {
    size_t kp = replica_int8_padded_inputs(inputs), op = replica_int8_padded_outputs(outputs);
    for (size_t r = 0; r < rows; ) {
        size_t group = rows - r >= 8 ? 8 : 1;
        // The next group's rows and residual are fetched into the second-level cache while this one is
        // multiplied, a share of them before each tile (all at once, the requests waited on each other).
        size_t next = r + group, ahead = (rows - next >= 8 ? 8 : rows - next), steps = (outputs + 2 * BLOCK - 1) / (2 * BLOCK);
        const float *rowsAhead = x + next * inputs, *residualAhead = residual ? residual + next * outputs : NULL;
        size_t rowShare = (ahead * inputs + steps - 1) / steps, residualShare = (ahead * outputs + steps - 1) / steps;
        quantize_rows_avx512(x + r * inputs, group, inputs, outliers, q + r * kp, rowScales + r, zeros + r);
        // The group's values in the outlier columns, row after row.
        float picked[8 * outliers.count + 1];
        for (size_t g = 0; g < group; g++)
            for (size_t j = 0; j < outliers.count; j++) picked[g * outliers.count + j] = x[(r + g) * inputs + outliers.columns[j]];
        for (size_t o = 0, step = 0; o < outputs; step++) {
            size_t blocks = op - o >= 2 * BLOCK ? 2 : 1;
            prefetch_share(rowsAhead, ahead * inputs, rowShare, step);
            prefetch_share(residualAhead, ahead * outputs, residualShare, step);
            const int8_t *block = packed + o * kp;
            __m512i acc[16];
            if (group == 8) (blocks == 2 ? tile8x2_vnni : tile8x1_vnni)(q + r * kp, kp, block, acc);
            else (blocks == 2 ? tile1x2_vnni : tile1x1_vnni)(q + r * kp, kp, block, acc);
            for (size_t b = 0; b < blocks; b++) {
                size_t first = o + b * BLOCK;
                if (first >= outputs) break;
                size_t width = outputs - first < BLOCK ? outputs - first : BLOCK;
                __mmask16 mask = (__mmask16)((1u << width) - 1);
                size_t at = r * outputs + first;
                finish_block_vnni(acc + b, group, rowScales + r, zeros + r, scales, sums, bias, picked, outliers, op, first,
                                  residual ? residual + at : NULL, out + at, outputs, mask);
            }
            o += blocks * BLOCK;
        }
        finish_rows(out + r * outputs, group, outputs, epilogue);
        r += group;
    }
}

// column_maxima_avx2 sixteen floats at a time.
REPLICA_VNNI static void column_maxima_avx512(const float *x, size_t rows, size_t width, float *maxima) {
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * width;
        size_t k = 0;
        for (; k + 16 <= width; k += 16)
            _mm512_storeu_ps(maxima + k, _mm512_max_ps(_mm512_loadu_ps(maxima + k), _mm512_abs_ps(_mm512_loadu_ps(row + k))));
        for (; k < width; k++) maxima[k] = fmaxf(maxima[k], fabsf(row[k]));
    }
}

#undef REPLICA_VNNI

static int has_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

static int has_vnni(void) {
    return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

int replica_int8_fast(void) { return has_avx2(); }

static int has_avx_vnni(void) { return has_avx2() && __builtin_cpu_supports("avxvnni"); }

int replica_int8_kernels(void) {
    return (has_avx2() ? REPLICA_INT8_AVX2 : 0) | (has_vnni() ? REPLICA_INT8_AVX512_VNNI : 0) | (has_avx_vnni() ? REPLICA_INT8_AVX_VNNI : 0);
}

void replica_int8_linear_using(int kernel, const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                               const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                               const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                               replica_int8_epilogue epilogue) {
    int available = replica_int8_kernels();
    if ((kernel & REPLICA_INT8_AVX512_VNNI) && (available & REPLICA_INT8_AVX512_VNNI)) {
        products_vnni(input, scratch, rowScales, zeros, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, out, epilogue);
    } else if ((kernel & (REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI)) && (available & REPLICA_INT8_AVX2)) {
        int dotProducts = (kernel & REPLICA_INT8_AVX_VNNI) && (available & REPLICA_INT8_AVX_VNNI);
        quantize_rows_avx2(input, rows, inputs, outliers, scratch, rowScales, zeros);
        products_avx2(input, scratch, rowScales, zeros, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, out, epilogue,
                      dotProducts);
    } else {
        replica_int8_linear_plain(input, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, out, scratch, rowScales, zeros, copy,
                                  epilogue);
    }
}

void replica_column_maxima(const float *x, size_t rows, size_t width, float *maxima) {
    if (has_vnni()) column_maxima_avx512(x, rows, width, maxima);
    else if (replica_int8_fast()) column_maxima_avx2(x, rows, width, maxima);
    else replica_column_maxima_plain(x, rows, width, maxima);
}

#else

int replica_int8_fast(void) { return 0; }

int replica_int8_kernels(void) { return 0; }

void replica_int8_linear_using(int kernel, const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                               const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                               const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                               replica_int8_epilogue epilogue) {
    replica_int8_linear_plain(input, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, out, scratch, rowScales, zeros, copy,
                              epilogue);
}

void replica_column_maxima(const float *x, size_t rows, size_t width, float *maxima) {
    replica_column_maxima_plain(x, rows, width, maxima);
}

#endif

void replica_int8_linear(const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                         const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                         const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                         replica_int8_epilogue epilogue) {
    replica_int8_linear_using(REPLICA_INT8_ALL, input, rows, inputs, packed, scales, sums, bias, outputs,
                              outliers, residual, out, scratch, rowScales, zeros, copy, epilogue);
}

void replica_int8_linear_plain(const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                               const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                               const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                               replica_int8_epilogue epilogue) {
    quantize_rows_plain(input, rows, inputs, outliers, copy, scratch, rowScales, zeros);
    products_plain(input, scratch, rowScales, zeros, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, out, epilogue);
}
