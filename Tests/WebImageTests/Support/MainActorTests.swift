import Testing

/// The suites whose tests run on the main actor, one test at a time: one of them holds the main
/// thread (without suspending) until a load finishes, which on a loaded machine takes seconds,
/// and beside it every other main-actor test waited as long and timed out.
@Suite("Main actor", .serialized)
enum MainActorTests {}
