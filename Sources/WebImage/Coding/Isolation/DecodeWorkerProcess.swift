import Foundation

/// One decode worker, seen from the server: a process started from the worker's executable
/// with one end of a socket pair as its standard input and output. It may be started ahead of
/// its request (``DecodeWorkerSpares``): it then loads the codec libraries and waits. The request
/// is sent with `MSG_NOSIGNAL`, so a worker that died cannot signal the server (`SIGPIPE`); the
/// reply is read from the same socket. Every wait lasts at most ``pollInterval`` and then looks at
/// `Task.isCancelled`: a cancelled decode kills the worker (`SIGKILL`), so its CPU stops within
/// that interval whatever the C decoder is doing.
///
/// All the unsafe work (spawning, file descriptors, raw reads) stays in this file.
/// `@unchecked Sendable`: an instance has one owner at a time — the spare table, under its lock,
/// or the one decode that took it out of the table or started it — and only that owner calls it.
/// Its end kills and reaps the worker if the owner has not.
final class DecodeWorkerProcess: @unchecked Sendable {
    static let pollInterval: Int32 = 10  // milliseconds
    private let pid: pid_t
    /// The server's end of the socket pair (non-blocking, close-on-exec).
    private let socket: Int32
    /// Set once the worker is reaped: its pid may then belong to another process, and is never signalled again.
    private var reaped = false
    /// Set when this side sends the `SIGKILL` (a cancel, a worker that would not exit).
    private var killedHere = false
    /// Set when the worker ended by a `SIGKILL` this side did not send: the kernel's out-of-memory
    /// killer (which the worker asks to choose it first), or an operator. Known once ``exitStatus()`` has run.
    private(set) var killedElsewhere = false

    /// Starts `worker`; `format` names the decode in the error when it cannot start.
    init(_ worker: DecodeIsolation.Worker, format: ImageFormat) throws(ImageDecodingError) {
        func failed(_ what: String) -> ImageDecodingError {
            .libraryUnavailable(format: format, reason: "the decode worker \(worker.executable) could not start: \(what) (\(String(cString: strerror(errno))))")
        }
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { throw failed("no socket pair") }
        defer { close(ends[1]) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        _ = Self.closeFrom?(&actions, 3)  // the server's sockets and files stay out of the worker
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)  // a server ignoring SIGPIPE must not pass that on
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([worker.executable] + worker.arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var spawned = pid_t()
        let status = (argv + [nil]).withUnsafeBufferPointer { args in
            posix_spawn(&spawned, worker.executable, &actions, &attributes, args.baseAddress!, environ)
        }
        guard status == 0 else {
            close(ends[0])
            errno = status
            throw failed("spawn failed")
        }
        pid = spawned
        socket = ends[0]
    }

    /// Whether the worker still runs (a spare that died while it waited is reaped here).
    var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == 0 else {
            reaped = true
            return false
        }
        return true
    }

    /// Sends `parts` (the framed description, then the encoded bytes: sent as they are, not
    /// copied into one request), then ends the worker's input. `false` when the worker went away first.
    func send(_ parts: [any ContiguousBytes]) throws(ImageDecodingError) -> Bool {
        var failure: ImageDecodingError?
        var sent = true
        for part in parts where sent {
            sent = part.withUnsafeBytes { bytes -> Bool in
                var offset = 0
                while offset < bytes.count, let base = bytes.baseAddress {
                    if Task.isCancelled {
                        failure = .cancelled
                        return false
                    }
                    var ready = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                    let polled = poll(&ready, 1, Self.pollInterval)
                    if polled < 0 && errno != EINTR { return false }
                    guard polled > 0 else { continue }
                    let count = Glibc.send(socket, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    guard count > 0 else { return false }
                    offset += count
                }
                return true
            }
        }
        if let failure {
            stop()
            throw failure
        }
        _ = shutdown(socket, Int32(SHUT_WR))
        return sent
    }

    deinit {
        stop()
        close(socket)
    }

    /// Fills `buffer` from the reply; `false` at the end of the reply (the worker exited or crashed).
    /// Throws ``ImageDecodingError/cancelled`` (the worker killed) when the task is cancelled.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Bool {
        var filled = 0
        while filled < buffer.count {
            guard !Task.isCancelled else {
                stop()
                throw .cancelled
            }
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Self.pollInterval)
            guard polled > 0 else {
                if polled < 0 && errno != EINTR { return false }
                continue
            }
            guard let base = buffer.baseAddress else { return true }
            let count = Glibc.read(socket, base + filled, buffer.count - filled)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else { return false }
            filled += count
        }
        return true
    }

    /// `count` bytes of the reply, or `nil` at its end.
    func read(count: Int) throws(ImageDecodingError) -> Data? {
        var data = Data(count: count)
        var complete = false
        var failure: ImageDecodingError?
        data.withUnsafeMutableBytes { buffer in
            do throws(ImageDecodingError) { complete = try read(into: buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        return complete ? data : nil
    }

    /// Kills the worker (if it still runs) and reaps it. A worker that has sent its whole reply is
    /// stopped this way too: one that would not exit cannot hold the decode.
    func stop() {
        guard !reaped else { return }
        killedHere = true
        kill(pid, SIGKILL)
        _ = exitStatus()
    }

    /// How the worker ended, in words, for an error message: waited for at most half a second
    /// (its reply has ended, so it should be exiting), then killed.
    func exitStatus() -> String {
        guard !reaped else { return "it had ended" }
        var status: Int32 = 0
        var exited = false
        for _ in 0..<500 where !exited {
            let found = waitpid(pid, &status, WNOHANG)
            if found == pid { exited = true } else if found < 0 && errno != EINTR {
                reaped = true
                return "its exit was not seen"
            } else {
                usleep(1000)
            }
        }
        if !exited {
            killedHere = true
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { break }
            }
        }
        reaped = true
        let signal = status & 0x7f
        if signal == SIGKILL && !killedHere {
            killedElsewhere = true
            return "it was killed (signal 9) from outside, most likely by the out-of-memory killer"
        }
        if signal != 0 { return "it was ended by signal \(signal)" }
        return "it exited with status \((status >> 8) & 0xff)"
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), found at run time:
    /// Swift's Glibc module leaves it out. Without it, descriptors the server opened without
    /// close-on-exec live in the worker until it exits.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
}
