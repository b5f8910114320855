import Testing

/// The image server's suites, one test at a time: each starts servers and renders images, and
/// run all at once beside the rest of the suite they starve its timing-sensitive tests on 2 cores.
@Suite("Image server", .serialized)
enum ServerTests {}
