import Foundation

/// The part of Foundation's `Process` the tests use, started with `posix_spawn` instead.
///
/// Foundation's `Process.run()` on Linux (swift-corelibs-foundation in Swift 6.3.1) scans
/// `/proc/self/fd` with a 256-byte copy of each directory entry's name, reading past glibc's
/// buffer when a short entry sits at its end before an unmapped page: the test process then dies
/// with "Bad pointer dereference" in `Process.run()` (swiftlang/swift-corelibs-foundation#5472;
/// seen here in a full run). This spawns like ``SpawnedProgram`` — the descriptors to close listed
/// through `FileManager`, signal mask and handlers reset — with pipes or file handles as the
/// child's standard streams, and a thread of its own that waits for the child's end.
///
/// `@unchecked Sendable`: the configuration is set before ``run()`` and only read after; `pid`,
/// `status` and `finished` are written under `condition` (the pid once, by `run()`).
final class TestProcess: @unchecked Sendable {
    var executableURL: URL?
    var arguments: [String]?
    var environment: [String: String]?
    /// A `Pipe` or a `FileHandle`; `nil` leaves the test process's own stream to the child.
    var standardInput: Any?
    var standardOutput: Any?
    var standardError: Any?
    /// Called once, on the waiting thread, when the child has ended.
    var terminationHandler: (@Sendable (TestProcess) -> Void)?

    private let condition = NSCondition()
    private var pid: pid_t = 0
    private var status: Int32 = 0
    private var finished = false

    var processIdentifier: Int32 { condition.withLock { pid } }
    var isRunning: Bool { condition.withLock { pid != 0 && !finished } }
    /// The exit code, or the number of the signal that ended the child (as `Process` reports it).
    var terminationStatus: Int32 {
        condition.withLock { (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f }
    }

    /// Whether a signal ended the child (`Process`'s `terminationReason == .uncaughtSignal`).
    var endedBySignal: Bool { condition.withLock { finished && (status & 0x7f) != 0 } }

    func run() throws {
        guard let path = executableURL?.path else { throw SpawnError(description: "no executable") }
        let child = try SpawnedProgram.spawn([path] + (arguments ?? []), environment: environment ?? ProcessInfo.processInfo.environment) { actions in
            for (target, stream, reading) in [(Int32(0), standardInput, true), (1, standardOutput, false), (2, standardError, false)] {
                if let descriptor = Self.descriptor(stream, childReads: reading) { posix_spawn_file_actions_adddup2(&actions, descriptor, target) }
            }
        }
        condition.withLock { pid = child }
        // The child has its copies: the parent's ends it writes to or reads from are closed here,
        // so a reader sees the end of the stream when the child exits.
        for (stream, reading) in [(standardInput, true), (standardOutput, false), (standardError, false)] {
            guard let pipe = stream as? Pipe else { continue }
            try? (reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
        Thread.detachNewThread { [self, child] in
            var result: Int32 = 0
            while waitpid(child, &result, 0) == -1 && errno == EINTR {}
            condition.withLock {
                status = result
                finished = true
                condition.broadcast()
            }
            terminationHandler?(self)
        }
    }

    /// Blocks until the child has ended (call it off the cooperative pool).
    func waitUntilExit() {
        condition.withLock { while !finished { condition.wait() } }
    }

    /// Asks the child to end (`SIGTERM`).
    func terminate() {
        let child = processIdentifier
        if child != 0 { _ = kill(child, SIGTERM) }
    }

    private static func descriptor(_ stream: Any?, childReads: Bool) -> Int32? {
        if let pipe = stream as? Pipe { return (childReads ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor }
        if let handle = stream as? FileHandle { return handle.fileDescriptor }
        return nil
    }
}
