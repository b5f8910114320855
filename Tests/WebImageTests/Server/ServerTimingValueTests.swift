import Testing
@testable import WebImageServer

/// `Server-Timing`'s `dur=` values: milliseconds with one decimal, rounded half up, written
/// without `String(format:)`, and never a trap however long or odd the duration.
@Suite("Server-Timing values")
struct ServerTimingValueTests {
    @Test(arguments: [
        (Duration.zero, "0.0"), (.microseconds(49), "0.0"), (.microseconds(50), "0.1"), (.microseconds(1_250), "1.3"),
        (.milliseconds(12) + .microseconds(340), "12.3"), (.seconds(2), "2000.0"), (.nanoseconds(-5), "0.0"),
        (.seconds(Int64.max), "1000000000000.0"),
    ])
    func millisecondsWithOneDecimal(duration: Duration, expected: String) {
        #expect(duration.millisecondsWithOneDecimal == expected)
    }
}
