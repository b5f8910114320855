import Foundation

/// A program the tests start with `posix_spawn`, as a clean child: only standard input, output
/// and error open, no blocked signals, default signal handlers.
///
/// Foundation's `Process` passes the test process's signal mask on (its Dispatch threads block
/// most signals), so a child such as Xvfb never sees `SIGTERM` and `terminate()` waits forever;
/// and a long-lived child that inherits other tests' sockets keeps their connections open after
/// their clients closed them. Children started here have neither problem.
struct SpawnedProgram: Sendable {
    let pid: pid_t

    /// Where a standard stream of the child goes.
    enum Stream {
        case null
        case file(String)
        case descriptor(Int32)
    }

    /// Starts `arguments[0]` (a path) with `arguments` as its argument list.
    init(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
         output: Stream = .null, error: Stream = .null) throws {
        pid = try Self.spawn(arguments, environment: environment) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            for (target, stream) in [(Int32(1), output), (Int32(2), error)] {
                switch stream {
                case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                case .file(let path): posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
                case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
                }
            }
        }
    }

    /// `posix_spawn` of `arguments[0]` with the standard streams `streams` sets up, every other
    /// descriptor closed, and the signal mask and handlers reset; the child's pid.
    static func spawn(
        _ arguments: [String], environment: [String: String], streams: (inout posix_spawn_file_actions_t) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        streams(&actions)
        // glibc's closefrom action is not visible to Swift: each descriptor open now is closed.
        // (Listed through FileManager: Foundation's own scan of /proc/self/fd is what crashes
        // `Process.run()`, see ``TestProcess``.)
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in open where descriptor > 2 { posix_spawn_file_actions_addclose(&actions, descriptor) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv + [nil], envp + [nil])
        guard spawned == 0 else {
            throw SpawnError(description: "cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    /// Whether the child has not ended yet (an ended child is reaped).
    var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Waits for the child to end (blocking: call through `offPool`); its exit status.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status
    }

    /// Ends the child at once (`SIGKILL`) and reaps it.
    func kill() {
        guard isRunning else { return }
        _ = Glibc.kill(pid, SIGKILL)
        wait()
    }
}

struct SpawnError: Error, CustomStringConvertible { var description: String }
