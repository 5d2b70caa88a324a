#ifndef REPLICA_VECTOR_KERNELS_H
#define REPLICA_VECTOR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/// The dot product of a float query with each of `rows` int8 rows of `dimensions` values, each scaled
/// by its row's scale: out[r] = scales[r] × Σ query[i] × values[r × dimensions + i].
///
/// Uses AVX2 and FMA when the processor has them (checked once), SSE2 on any other x86-64, plain C
/// elsewhere.
void replica_scaled_dots(const float *query, const int8_t *values, const float *scales, size_t rows,
                         size_t dimensions, float *out);

/// The same without AVX2 (SSE2 on x86-64, plain C elsewhere): what a processor without AVX2 runs, here
/// so that tests check it on every machine.
void replica_scaled_dots_baseline(const float *query, const int8_t *values, const float *scales, size_t rows,
                                  size_t dimensions, float *out);

/// The inputs a row of packed int8 weights holds: `inputs` rounded up to a multiple of 4.
size_t replica_int8_padded_inputs(size_t inputs);
/// The outputs packed int8 weights hold: `outputs` rounded up to a multiple of 16.
size_t replica_int8_padded_outputs(size_t outputs);

/// Quantises a dense layer's weights ([outputs × inputs] floats, as PyTorch keeps them) for
/// ``replica_int8_linear``: each output's weights scaled to [-127, 127] by its own scale. `packed` holds
/// padded outputs × padded inputs bytes; `scales` and `sums` (each output's sum of its int8 weights)
/// hold padded outputs values.
void replica_int8_pack(const float *weights, size_t outputs, size_t inputs, int8_t *packed, float *scales, int32_t *sums);

/// Columns of a dense layer's input multiplied in float32 rather than int8 (those with outsized values):
/// their indices, in increasing order, and their weights as `count` rows of padded outputs floats.
typedef struct {
    const size_t *columns;
    size_t count;
    const float *weights;
} replica_int8_outliers;

/// What ``replica_int8_linear`` does to each group of its output rows as soon as the group is complete,
/// while it is still in the cache, rather than in another pass over all of them: `kind` is
/// `REPLICA_EPILOGUE_NONE`, `REPLICA_EPILOGUE_LAYER_NORM` (``replica_layer_norm`` with `gain` and `bias`)
/// or `REPLICA_EPILOGUE_GELU` (``replica_gelu``); then, when `maxima` is not NULL, each output column's
/// largest magnitude is raised into it (``replica_column_maxima``, `outputs` floats): what the next
/// product chooses its outlier columns by.
typedef struct {
    int kind;
    const float *gain;
    const float *bias;
    float *maxima;
} replica_int8_epilogue;

enum {
    REPLICA_EPILOGUE_NONE = 0,
    REPLICA_EPILOGUE_LAYER_NORM = 1,
    REPLICA_EPILOGUE_GELU = 2,
};

/// Writes `input · weightsᵀ + bias + residual` to `out` ([rows × outputs]; `residual` the same shape, or
/// NULL for none): each input row, its outlier columns left out, quantised to 7 bits on its own range and
/// multiplied in int8 with the sums exact in int32; the outlier columns multiplied in float32. `bias`
/// holds padded outputs values, `scratch` rows × padded inputs bytes, `rowScales` and `zeros` rows values
/// each, `copy` inputs floats. `epilogue` is applied to the outputs, rows in groups. Uses AVX-512 VNNI
/// when the processor has it, else AVX-VNNI, else AVX2, else plain C (checked at each call).
void replica_int8_linear(const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                         const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                         const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                         replica_int8_epilogue epilogue);

/// The instruction sets ``replica_int8_linear_using`` can choose between.
enum {
    REPLICA_INT8_AVX2 = 1,
    REPLICA_INT8_AVX512_VNNI = 2,
    /// AVX-VNNI: `vpdpbusd` on 256-bit registers, with AVX2.
    REPLICA_INT8_AVX_VNNI = 4,
    REPLICA_INT8_ALL = 7,
};

/// Which of `REPLICA_INT8_AVX2`, `REPLICA_INT8_AVX512_VNNI` and `REPLICA_INT8_AVX_VNNI` this processor
/// has (0: none).
int replica_int8_kernels(void);

/// ``replica_int8_linear`` on the best of the instruction sets `kernel` allows that the processor has
/// (plain C when none): so that tests check every path the processor can run, and benchmarks compare them.
void replica_int8_linear_using(int kernel, const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                               const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                               const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                               replica_int8_epilogue epilogue);

/// The same in plain C, whatever the processor: what tests check the fast path against.
void replica_int8_linear_plain(const float *input, size_t rows, size_t inputs, const int8_t *packed, const float *scales,
                               const int32_t *sums, const float *bias, size_t outputs, replica_int8_outliers outliers,
                               const float *residual, float *out, uint8_t *scratch, float *rowScales, int32_t *zeros, float *copy,
                               replica_int8_epilogue epilogue);

/// Raises each of `maxima`'s `width` values to the largest magnitude its column has in `x`'s rows.
void replica_column_maxima(const float *x, size_t rows, size_t width, float *maxima);
/// The same in plain C.
void replica_column_maxima_plain(const float *x, size_t rows, size_t width, float *maxima);

/// Whether ``replica_int8_linear`` has a fast path on this processor (AVX2 with FMA); without one, the
/// encoder keeps its float32 matrix products.
int replica_int8_fast(void);

/// Replaces each of `rows` rows of `width` values by its softmax: e^(x − the row's largest), divided by
/// their sum. AVX-512 or AVX2 when the processor has them (checked at each call), plain C otherwise.
/// The encoder reaches these paths through ``replica_attention``; this entry is how tests check them.
void replica_softmax_rows(float *x, size_t rows, size_t width);
/// The same in plain C, whatever the processor: what tests check the vector paths against.
void replica_softmax_rows_plain(float *x, size_t rows, size_t width);

/// Applies BERT's GELU, `x · (1 + erf(x / √2)) / 2`, to each of `count` values, as
/// ``replica_softmax_rows`` chooses its path.
void replica_gelu(float *x, size_t count);
/// The same in plain C, whatever the processor.
void replica_gelu_plain(float *x, size_t count);

/// One head's attention over a sequence of `n` tokens: row i of `out` (rows `outStride` floats apart)
/// becomes softmax(scale · qᵢ · Kᵀ) · V, where qᵢ, kⱼ and vⱼ are `size` floats at q + i·stride,
/// k + j·stride and v + j·stride. Each score sums its products in order of the dimensions, each output
/// in order of the tokens (then divided by the sum of the row's exponentials), each product added by a
/// fused multiply-add (`fmaf` in plain C), so that every path gives the plain C one's values but for the
/// order of the softmax's sums. AVX-512 when `size` is a multiple of 16, AVX2 when
/// of 8, as ``replica_softmax_rows`` chooses; plain C otherwise. `scratch` holds at least
/// ``replica_attention_scratch`` floats.
void replica_attention(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                       float *out, size_t outStride, float *scratch);
/// The same in plain C, whatever the processor (it needs `n` floats of scratch).
void replica_attention_plain(const float *q, const float *k, const float *v, size_t stride, size_t n, size_t size, float scale,
                             float *out, size_t outStride, float *scratch);
/// The floats of scratch ``replica_attention`` needs for `n` tokens of `size` values.
size_t replica_attention_scratch(size_t n, size_t size);

/// Normalises each of `rows` rows of `width` values to mean 0 and variance 1 (plus 10^-12), then scales
/// each column by `gain` and adds `bias`: BERT's layer normalisation, as ``replica_softmax_rows`` chooses
/// its path.
void replica_layer_norm(float *x, size_t rows, size_t width, const float *gain, const float *bias);
/// The same in plain C, whatever the processor.
void replica_layer_norm_plain(float *x, size_t rows, size_t width, const float *gain, const float *bias);

/// The exponential and erf those use, one value at a time: polynomials within a few units in the last
/// place of a float (against the C library's `expf` and `erff` in the tests).
float replica_exp(float x);
float replica_erf(float x);

#endif
