import Foundation
import Testing

/// Runs the built `webimage` executable as a real process.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum WebImageCommand {
    /// `webimage` sits next to the test bundle in the build directory.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("webimage").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("webimage")
    }

    /// Runs `webimage ARGUMENTS` (or another `program`, e.g. a reference implementation). A
    /// process still running after `timeout` (scaled by `TestTime`) is killed and the test fails
    /// with an issue: a command that hangs (a `serve` that should have refused its options, a
    /// read that blocks) fails its test instead of stopping the suite.
    static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], program: URL? = nil,
        timeout: Duration = .seconds(600)
    ) async throws -> CommandResult {
        let process = TestProcess()
        process.executableURL = program ?? executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        // Both pipes are drained while the process runs: read only after it exited, a child that
        // wrote more than a pipe holds (64 KB: Thread Sanitizer's reports on stderr did) blocked
        // on the write forever, and so did the test. The readers block threads of their own, not
        // the cooperative pool's (the origin runs on it); so does the wait for them.
        let watchdog = Watchdog()
        let result: CommandResult = try await withCheckedThrowingContinuation { continuation in
            let output = PipeReader(out), errors = PipeReader(err)
            process.terminationHandler = { finished in
                let stdout = String(decoding: output.data(), as: UTF8.self)
                let stderr = String(decoding: errors.data(), as: UTF8.self)
                continuation.resume(returning: CommandResult(status: finished.terminationStatus, stdout: stdout, stderr: stderr))
            }
            do {
                try process.run()
                watchdog.start(after: TestTime.scaled(timeout)) { kill(process.processIdentifier, SIGKILL) }
                output.start()
                errors.start()
                if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
                try? input.fileHandleForWriting.close()
            } catch {
                continuation.resume(throwing: error)
            }
        }
        watchdog.cancel()
        if watchdog.fired {
            Issue.record("\(([process.executableURL?.lastPathComponent ?? ""] + arguments).joined(separator: " ").prefix(300)) was still running after \(TestTime.scaled(timeout)): killed")
        }
        ChildSanitizerReports.check(result.stderr, pid: process.processIdentifier, of: [process.executableURL?.lastPathComponent ?? ""] + arguments)
        return result
    }
}

/// Reads one pipe to its end on a thread of its own, while its process runs (a child blocks on
/// a full pipe nobody reads). `@unchecked Sendable`: `collected` is
/// written once by the reading thread before `done` is signalled, and read only after waiting
/// for that signal.
final class PipeReader: @unchecked Sendable {
    private let pipe: Pipe
    private let done = DispatchSemaphore(value: 0)
    private var collected = Data()

    init(_ pipe: Pipe) { self.pipe = pipe }

    func start() {
        Thread.detachNewThread {
            self.collected = self.pipe.fileHandleForReading.readDataToEndOfFile()
            self.done.signal()
        }
    }

    /// Everything the pipe carried; waits until its writer closed it.
    func data() -> Data {
        done.wait()
        return collected
    }
}

/// Kills a process that runs too long: `start` waits on a thread of its own, and `cancel`
/// (the process ended) stops it. `@unchecked Sendable`: `state` is only touched under `lock`.
final class Watchdog: @unchecked Sendable {
    private let lock = NSCondition()
    private var state = (cancelled: false, fired: false)

    /// Whether the time ran out and the kill was sent.
    var fired: Bool { lock.withLock { state.fired } }

    func start(after limit: Duration, kill: @escaping @Sendable () -> Void) {
        let deadline = Date().addingTimeInterval(Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18)
        Thread.detachNewThread {
            self.lock.lock()
            while !self.state.cancelled, self.lock.wait(until: deadline) {}
            let fire = !self.state.cancelled
            if fire { self.state.fired = true }
            self.lock.unlock()
            if fire { kill() }
        }
    }

    func cancel() {
        lock.withLock {
            state.cancelled = true
            lock.broadcast()
        }
    }
}
