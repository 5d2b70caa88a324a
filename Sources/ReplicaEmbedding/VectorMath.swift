import Foundation

/// `erf` and `exp` for the encoder's GELU and softmax, written as plain loops of arithmetic that the
/// compiler turns into vector instructions. glibc's `erff` and `expf` go one value at a time and were
/// most of the encoder's time outside its matrix products (a text of 100 word pieces makes 900,000
/// GELUs and 680,000 exponentials): measured here, a GELU took 12–16 ns with `erff` and 2 ns with
/// this `erf`, an exponential 4.2 ns with `expf` and 2–3 ns with this `exp`.
///
/// Both are polynomial approximations within a few units in the last place of a float (the encoder
/// test checks them against the C library, and the vectors against the reference implementation).
/// Swift's `SIMD16` types, tried first, ran slower than `erff`: their clamps, rounding and conversions
/// did not become vector instructions.
enum VectorMath {
    /// erf(x): an odd polynomial of degree 13 over an even one of degree 8 (the rational form and
    /// coefficients XLA uses for float erf), with x clamped to ±4, beyond which float erf is ±1.
    @inline(__always)
    static func erf(_ value: Float) -> Float {
        let x = value < -4 ? -4 : (value > 4 ? 4 : value)
        let x2 = x * x
        var p = x2 * -2.72614225801306e-10 + 2.77068142495902e-08
        p = x2 * p + -2.10102402082508e-06
        p = x2 * p + -5.69250639462346e-05
        p = x2 * p + -7.34990630326855e-04
        p = x2 * p + -2.95459980854025e-03
        p = x2 * p + -1.60960333262415e-02
        var q = x2 * -1.45660718464996e-05 + -2.13374055278905e-04
        q = x2 * q + -1.68282697438203e-03
        q = x2 * q + -7.37332916720468e-03
        q = x2 * q + -1.42647390514189e-02
        return x * p / q
    }

    /// e^x: x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by Cephes' polynomial of degree 6 for `expf`, and
    /// 2^n put straight into the exponent bits. x is clamped to the range of normal floats.
    @inline(__always)
    static func exp(_ value: Float) -> Float {
        let x = value < -87.3 ? -87.3 : (value > 88.3 ? 88.3 : value)
        // Rounded to the nearest whole number by adding 1.5 × 2^23, which leaves n in the low bits of
        // `shifted` (where `rounded()` and `Int32(_:)` would keep the loop from being vectorised).
        let shifted = x * 1.44269504088896341 + 12_582_912
        let n = shifted - 12_582_912
        // ln 2 in two parts, so that n·ln 2 is subtracted without losing r's low bits.
        let r = x - n * 0.693359375 + n * 2.12194440e-4
        var p = r * 1.9875691500e-4 + 1.3981999507e-3
        p = p * r + 8.3334519073e-3
        p = p * r + 4.1665795894e-2
        p = p * r + 1.6666665459e-1
        p = p * r + 5.0000001201e-1
        let y = p * r * r + r + 1
        // 2^n: n + 127 in the exponent field (shifted's bits are 0x4B400000 + n).
        return y * Float(bitPattern: (shifted.bitPattern &- 0x4B40_0000 &+ 127) &<< 23)
    }

    /// Applies BERT's GELU, `x · (1 + erf(x / √2)) / 2`, to every value.
    static func gelu(_ values: UnsafeMutableBufferPointer<Float>) {
        for i in 0..<values.count {
            let x = values[i]
            values[i] = 0.5 * x * (1 + erf(x * 0.70710678118654752))
        }
    }

    /// Replaces each value of a row by e^(value − largest) and returns their sum.
    static func exponentiate(_ row: UnsafeMutableBufferPointer<Float>, subtracting largest: Float) -> Float {
        for i in 0..<row.count { row[i] = exp(row[i] - largest) }
        // Summed apart: a sum in the same loop would keep it from being vectorised.
        var sum: Float = 0
        for i in 0..<row.count { sum += row[i] }
        return sum
    }
}
