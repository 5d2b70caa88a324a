extension Duration {
    /// The duration in seconds, fractions included: for a sleep, a rate or a figure shown.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
