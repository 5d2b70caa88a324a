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

#endif
