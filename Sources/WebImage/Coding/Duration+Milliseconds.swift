extension Duration {
    /// Whole milliseconds (rounded toward zero), clamped to `range`; never traps, however long or
    /// negative the duration: an ``Image`` a caller hands an encoder can hold any ``ImageFrame``
    /// duration, and `Int(duration / .milliseconds(1))` traps past `Int.max` milliseconds.
    ///
    /// ```swift
    /// Duration.seconds(Int64.max).wholeMilliseconds(clampedTo: 0...0xFF_FFFF)   // 16_777_215
    /// ```
    func wholeMilliseconds(clampedTo range: ClosedRange<Int>) -> Int {
        // Both components carry the duration's sign, and attoseconds stay under one second.
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = Int(seconds).multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? range.lowerBound : range.upperBound }
        let (total, overflowTotal) = milliseconds.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000_000))
        guard !overflowTotal else { return seconds < 0 ? range.lowerBound : range.upperBound }
        return min(max(total, range.lowerBound), range.upperBound)
    }
}
