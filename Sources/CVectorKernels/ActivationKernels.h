// The vector forms of Activations.c's exp, erf, GELU, softmax, layer normalisation and attention, for one
// vector width: Activations.c includes this file once per instruction set, with ACT_NAME, ACT_TARGET,
// ACT_WIDTH and the V_ macros naming that set's types and operations. The operations and their order
// are exp_one's and erf_one's (fused multiply-adds where they use fmaf), and attention's are
// replica_attention_plain's.

ACT_TARGET
static inline VF ACT_NAME(exp_vector)(VF value) {
    VF x = V_MIN(V_MAX(value, V_SET1(EXP_LOWEST)), V_SET1(EXP_HIGHEST));
    VF shifted = V_FMA(x, V_SET1(LOG2E), V_SET1(ROUNDER));
    VF n = V_SUB(shifted, V_SET1(ROUNDER));
    VF r = V_FMA(n, V_SET1(-LN2_LOW), V_FMA(n, V_SET1(-LN2_HIGH), x));
    VF p = V_FMA(r, V_SET1(EXP_P0), V_SET1(EXP_P1));
    p = V_FMA(p, r, V_SET1(EXP_P2));
    p = V_FMA(p, r, V_SET1(EXP_P3));
    p = V_FMA(p, r, V_SET1(EXP_P4));
    p = V_FMA(p, r, V_SET1(EXP_P5));
    VF y = V_ADD(V_FMA(p, V_MUL(r, r), r), V_SET1(1));
    VI bits = VI_SHIFT_LEFT(VI_ADD(VI_SUB(V_BITS(shifted), VI_SET1(0x4B400000)), VI_SET1(127)), 23);
    return V_MUL(y, V_FLOATS(bits));
}

ACT_TARGET
static inline VF ACT_NAME(erf_vector)(VF value) {
    VF x = V_MIN(V_MAX(value, V_SET1(-4)), V_SET1(4));
    VF x2 = V_MUL(x, x);
    VF p = V_FMA(x2, V_SET1(ERF_P0), V_SET1(ERF_P1));
    p = V_FMA(x2, p, V_SET1(ERF_P2));
    p = V_FMA(x2, p, V_SET1(ERF_P3));
    p = V_FMA(x2, p, V_SET1(ERF_P4));
    p = V_FMA(x2, p, V_SET1(ERF_P5));
    p = V_FMA(x2, p, V_SET1(ERF_P6));
    VF q = V_FMA(x2, V_SET1(ERF_Q0), V_SET1(ERF_Q1));
    q = V_FMA(x2, q, V_SET1(ERF_Q2));
    q = V_FMA(x2, q, V_SET1(ERF_Q3));
    q = V_FMA(x2, q, V_SET1(ERF_Q4));
    return V_DIV(V_MUL(x, p), q);
}

ACT_TARGET
static void ACT_NAME(gelu)(float *x, size_t count) {
    size_t i = 0;
    for (; i + ACT_WIDTH <= count; i += ACT_WIDTH) {
        VF v = V_LOAD(x + i);
        VF e = ACT_NAME(erf_vector)(V_MUL(v, V_SET1(SQRT_HALF)));
        VF half = V_MUL(V_SET1(0.5f), v);
        V_STORE(x + i, V_FMA(half, e, half));
    }
    if (i < count) {
        // The last few through a vector of their own, padded with zeros: one value at a time costs more.
        float tail[ACT_WIDTH] = {0};
        memcpy(tail, x + i, (count - i) * sizeof(float));
        ACT_NAME(gelu)(tail, ACT_WIDTH);
        memcpy(x + i, tail, (count - i) * sizeof(float));
    }
}

// Replaces each of a row's `width` values by e^(value − largest) and returns their sum.
ACT_TARGET
static float ACT_NAME(exponentials)(float *row, size_t width, float largest) {
    VF sums = V_SET1(0), shift = V_SET1(largest);
    size_t c = 0;
    for (; c + ACT_WIDTH <= width; c += ACT_WIDTH) {
        VF e = ACT_NAME(exp_vector)(V_SUB(V_LOAD(row + c), shift));
        V_STORE(row + c, e);
        sums = V_ADD(sums, e);
    }
    float sum = V_REDUCE_ADD(sums);
    if (c < width) {
        // The last few through a vector of their own, padded with the smallest exponent (whose e^x,
        // 10^-38, leaves a sum of at least 1 as it is).
        float tail[ACT_WIDTH];
        for (size_t t = 0; t < ACT_WIDTH; t++) tail[t] = c + t < width ? row[c + t] - largest : EXP_LOWEST;
        V_STORE(tail, ACT_NAME(exp_vector)(V_LOAD(tail)));
        for (size_t t = 0; c < width; t++, c++) { row[c] = tail[t]; sum += tail[t]; }
    }
    return sum;
}

ACT_TARGET
static void ACT_NAME(softmax_rows)(float *x, size_t rows, size_t width) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * width;
        VF most = V_SET1(-INFINITY);
        size_t c = 0;
        for (; c + ACT_WIDTH <= width; c += ACT_WIDTH) most = V_MAX(most, V_LOAD(row + c));
        float largest = V_REDUCE_MAX(most);
        for (; c < width; c++) largest = row[c] > largest ? row[c] : largest;
        float sum = ACT_NAME(exponentials)(row, width, largest);
        VF inverse = V_SET1(1 / sum);
        for (c = 0; c + ACT_WIDTH <= width; c += ACT_WIDTH) V_STORE(row + c, V_MUL(V_LOAD(row + c), inverse));
        for (; c < width; c++) row[c] *= 1 / sum;
    }
}

ACT_TARGET
static void ACT_NAME(layer_norm)(float *x, size_t rows, size_t width, const float *gain, const float *bias) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * width;
        VF sums = V_SET1(0);
        size_t c = 0;
        for (; c + ACT_WIDTH <= width; c += ACT_WIDTH) sums = V_ADD(sums, V_LOAD(row + c));
        float sum = V_REDUCE_ADD(sums);
        for (; c < width; c++) sum += row[c];
        float mean = sum / (float)width;
        VF means = V_SET1(mean), squares = V_SET1(0);
        for (c = 0; c + ACT_WIDTH <= width; c += ACT_WIDTH) {
            VF d = V_SUB(V_LOAD(row + c), means);
            squares = V_ADD(squares, V_MUL(d, d));
        }
        float variance = V_REDUCE_ADD(squares);
        for (; c < width; c++) variance += (row[c] - mean) * (row[c] - mean);
        float inverse = 1 / sqrtf(variance / (float)width + 1e-12f);
        VF inverses = V_SET1(inverse);
        for (c = 0; c + ACT_WIDTH <= width; c += ACT_WIDTH)
            V_STORE(row + c, V_ADD(V_MUL(V_MUL(V_SUB(V_LOAD(row + c), means), inverses), V_LOAD(gain + c)), V_LOAD(bias + c)));
        for (; c < width; c++) row[c] = (row[c] - mean) * inverse * gain[c] + bias[c];
    }
}

ACT_TARGET
static void ACT_NAME(attention)(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                                float *out, size_t outStride, float *scratch) {
    // Keys transposed, `size` lines of `padded` values (zeros past n), so that a vector holds one
    // dimension of ACT_WIDTH keys; then `block` rows of scores at a time (at most ATTENTION_ROWS, which
    // the scratch is sized for), each against two vectors of keys (and then of values) at a time:
    // 2 × `block` sums in flight, enough to keep the multiply-adds busy, in the registers the
    // instruction set has.
    enum { block = ACT_WIDTH == 16 ? 8 : 4 };
    size_t padded = (n + 2 * ACT_WIDTH - 1) / (2 * ACT_WIDTH) * (2 * ACT_WIDTH);
    float *keys = scratch, *scores = scratch + size * padded;
    for (size_t d = 0; d < size; d++) {
        float *line = keys + d * padded;
        for (size_t j = 0; j < n; j++) line[j] = k[j * stride + d];
        for (size_t j = n; j < padded; j++) line[j] = 0;
    }
    VF scales = V_SET1(scale);
    // The pairs of vectors of keys that lie wholly within the n keys.
    size_t whole = n / (2 * ACT_WIDTH) * (2 * ACT_WIDTH);
    for (size_t i = 0; i < n; i += block) {
        size_t rows = n - i < block ? n - i : block;
        // A short last block repeats its last row, computed and not kept.
        const float *queries[block];
        for (size_t r = 0; r < block; r++) queries[r] = q + (i + (r < rows ? r : rows - 1)) * stride;
        VF most[block];
        for (size_t r = 0; r < block; r++) most[r] = V_SET1(-INFINITY);
        for (size_t j = 0; j < padded; j += 2 * ACT_WIDTH) {
            VF first[block], second[block];
            for (size_t r = 0; r < block; r++) first[r] = second[r] = V_SET1(0);
            for (size_t d = 0; d < size; d++) {
                VF key = V_LOAD(keys + d * padded + j), next = V_LOAD(keys + d * padded + j + ACT_WIDTH);
                for (size_t r = 0; r < block; r++) {
                    VF weight = V_SET1(queries[r][d]);
                    first[r] = V_FMA(weight, key, first[r]);
                    second[r] = V_FMA(weight, next, second[r]);
                }
            }
            for (size_t r = 0; r < block; r++) {
                VF a = V_MUL(first[r], scales), b = V_MUL(second[r], scales);
                V_STORE(scores + r * padded + j, a);
                V_STORE(scores + r * padded + j + ACT_WIDTH, b);
                // The largest score is kept as they are made (those of the zero keys past n left out).
                if (j < whole) most[r] = V_MAX(most[r], V_MAX(a, b));
            }
        }
        // Each row's exponentials; the weighted values are divided by their sum at the end.
        float inverses[block];
        for (size_t r = 0; r < block; r++) {
            inverses[r] = 0;
            if (r >= rows) continue;
            float *row = scores + r * padded, largest = V_REDUCE_MAX(most[r]);
            for (size_t j = whole; j < n; j++) largest = row[j] > largest ? row[j] : largest;
            inverses[r] = 1 / ACT_NAME(exponentials)(row, n, largest);
        }
        for (size_t c = 0; c < size; c += 2 * ACT_WIDTH) {
            // The second vector of values is the first again when `size` holds an odd number of vectors.
            size_t other = c + 2 * ACT_WIDTH <= size ? c + ACT_WIDTH : c;
            VF first[block], second[block];
            for (size_t r = 0; r < block; r++) first[r] = second[r] = V_SET1(0);
            for (size_t j = 0; j < n; j++) {
                VF value = V_LOAD(v + j * stride + c), next = V_LOAD(v + j * stride + other);
                for (size_t r = 0; r < block; r++) {
                    VF weight = V_SET1(scores[r * padded + j]);
                    first[r] = V_FMA(weight, value, first[r]);
                    second[r] = V_FMA(weight, next, second[r]);
                }
            }
            for (size_t r = 0; r < rows; r++) {
                VF inverse = V_SET1(inverses[r]);
                V_STORE(out + (i + r) * outStride + c, V_MUL(first[r], inverse));
                if (other != c) V_STORE(out + (i + r) * outStride + other, V_MUL(second[r], inverse));
            }
        }
    }
}
