import Foundation

/// How much slower than a normal debug build the tests run: `WEBIMAGE_TEST_TIME_SCALE`, 1 unless
/// set (`scripts/tsan` sets 4: Thread Sanitizer makes the origin, the loaders and the pipeline
/// several times slower). Timeouts the tests configure, and the bounds that compare against
/// them, are multiplied by it together, so each test still tells the behaviour it checks from
/// the one it rules out.
enum TestTime {
    static let scale: Int = {
        let value = ProcessInfo.processInfo.environment["WEBIMAGE_TEST_TIME_SCALE"].flatMap { Int($0) } ?? 1
        return max(1, value)
    }()

    /// `duration`, scaled.
    static func scaled(_ duration: Duration) -> Duration { duration * scale }
}
