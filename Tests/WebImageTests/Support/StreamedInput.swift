import Foundation

/// Runs `webimage ARGUMENTS` with a huge standard input streamed on a thread of its own (never
/// held by the test): `head`, then `megabytes` MB of `a` without a newline, then `tail`. The pipe
/// stays open until `until` holds, so the peak memory read then covers the whole read.
///
/// ```swift
/// let run = try await StreamedInput.run(["fetch", "--input", "-", …], head: …, megabytes: 256, tail: …) { origin.requestCount(…) == 1 }
/// #expect(run.peakBytes! < 128 << 20)
/// ```
enum StreamedInput {
    struct Outcome {
        var status: Int32
        /// `VmHWM` when `until` held (`nil` if it could not be read).
        var peakBytes: Int?
        var conditionMet: Bool
    }

    static func run(
        _ arguments: [String], head: String, megabytes: Int, tail: String, until condition: () async -> Bool
    ) async throws -> Outcome {
        let process = TestProcess()
        process.executableURL = WebImageCommand.executable
        process.arguments = arguments
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // On a thread of its own: blocked on the pipe for seconds, a thread of the shared pool
        // stalled every other test.
        let writer = input.fileHandleForWriting
        Thread.detachNewThread {
            writer.write(Data(head.utf8))
            let chunk = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
            for _ in 0..<megabytes { writer.write(chunk) }
            writer.write(Data(tail.utf8))
        }
        let met = await eventually(timeout: .seconds(60), condition)
        let peak = ProcessUsage.peakResidentBytes(process.processIdentifier)
        try writer.close()
        await offPool { process.waitUntilExit() }
        return Outcome(status: process.terminationStatus, peakBytes: peak, conditionMet: met)
    }
}
