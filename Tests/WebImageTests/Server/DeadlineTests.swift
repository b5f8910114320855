import Foundation
import Testing
@testable import WebImageServer

/// The processing deadline's waiting: the value when it comes in time, nil and a cancel when it
/// does not, and nothing of the value kept once it has been handed over.
@Suite("Deadline")
struct DeadlineTests {
    /// Stands for a rendered image or a fetched source: its memory must go when the request ends.
    final class Payload: Sendable {}

    @Test func aValueInTimeIsHandedOverAndNotKept() async throws {
        weak var kept: Payload?
        // No handle to the task here: a task holds its value while anyone holds the task.
        var value = await Deadline.value(of: Task { () -> Payload? in Payload() }, timeout: .seconds(60))
        kept = value ?? nil
        #expect(kept != nil)
        value = nil
        // Before, the deadline's timer held the task, and with it the value, for the whole
        // timeout (a source's memory reservation stayed taken for 15 s after its answer).
        let released = await eventually(timeout: .seconds(5)) { kept == nil }
        #expect(released, "the value was still held after it was handed over")
    }

    @Test func workPastItsDeadlineIsCancelled() async throws {
        let work = Task { () -> Bool in
            try? await Task.sleep(for: .seconds(60))
            return Task.isCancelled
        }
        let start = ContinuousClock.now
        #expect(await Deadline.value(of: work, timeout: .milliseconds(50)) == nil)
        #expect(await work.value, "the work was not cancelled")
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}
