import Testing

/// Suites that decode, encode or process large or many images, or run child processes that do,
/// one test at a time: started all at once beside the rest of the suite, they kept the two cores
/// busy for a minute and the timing-sensitive tests that started with them timed out (as
/// ``ServerTests`` does for the server's suites), and on the CPU-bound lane (``CPUBoundTrait``),
/// not on the cooperative pool.
@Suite("Heavy work", .serialized, .cpuBound)
enum HeavyTests {}
