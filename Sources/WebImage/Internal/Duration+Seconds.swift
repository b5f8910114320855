extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in whole nanoseconds, saturating at `Int64.max` / `.min` (a huge timeout
    /// meant as "none" must not trap).
    var nanoseconds: Int64 {
        let (whole, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return components.seconds < 0 ? .min : .max }
        let (total, overflowSum) = whole.addingReportingOverflow(components.attoseconds / 1_000_000_000)
        return overflowSum ? (whole < 0 ? .min : .max) : total
    }

    /// The longest timeout applied: a year (longer ones, e.g. meant as "no timeout", are cut to it
    /// so that deadlines never overflow the clock).
    static let longestTimeout = Duration.seconds(365 * 24 * 3600)
}
