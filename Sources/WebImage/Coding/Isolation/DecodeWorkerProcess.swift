import Foundation

/// One running decode worker, seen from the server: started with its request as standard
/// input (an unlinked temporary file: nothing to write while the worker runs, so no broken pipe
/// can signal the server), its reply read from a pipe. Every wait on the pipe lasts at most
/// ``pollInterval`` and then looks at `Task.isCancelled`: a cancelled decode kills the worker
/// (`SIGKILL`), so its CPU stops within that interval whatever the C decoder is doing.
///
/// All the unsafe work (spawning, file descriptors, raw reads) stays in this file. An instance
/// belongs to the one decode that started it (not `Sendable`); its end kills and reaps the worker
/// if the decode has not.
final class DecodeWorkerProcess {
    static let pollInterval: Int32 = 10  // milliseconds
    /// Linux's `F_SETPIPE_SZ` (`F_LINUX_SPECIFIC_BASE + 7`), which Swift's Glibc module leaves out.
    private static let setPipeSize: Int32 = 1031
    private let pid: pid_t
    private let reply: Int32
    /// Set once the worker is reaped: its pid may then belong to another process, and is never signalled again.
    private var reaped = false

    /// Starts `executable` with `arguments` and `request` (a framed description and the encoded bytes) as its input.
    init(executable: String, arguments: [String], request: Data, format: ImageFormat) throws(ImageDecodingError) {
        func failed(_ what: String) -> ImageDecodingError {
            .libraryUnavailable(format: format, reason: "the decode worker \(executable) could not start: \(what) (\(String(cString: strerror(errno))))")
        }
        let input = try Self.temporaryFile(holding: request, failure: failed)
        defer { close(input) }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw failed("no pipe") }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(pipeEnds[0], Self.setPipeSize, 1 << 20)  // fewer reads for large images; a failure only costs speed
        defer { close(pipeEnds[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
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
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var spawned = pid_t()
        let status = (argv + [nil]).withUnsafeBufferPointer { args in
            posix_spawn(&spawned, executable, &actions, &attributes, args.baseAddress!, environ)
        }
        guard status == 0 else {
            close(pipeEnds[0])
            errno = status
            throw failed("spawn failed")
        }
        pid = spawned
        reply = pipeEnds[0]
    }

    deinit {
        stop()
        close(reply)
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
            var ready = pollfd(fd: reply, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Self.pollInterval)
            guard polled > 0 else {
                if polled < 0 && errno != EINTR { return false }
                continue
            }
            guard let base = buffer.baseAddress else { return true }
            let count = Glibc.read(reply, base + filled, buffer.count - filled)
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

    /// Kills the worker (if it still runs) and reaps it.
    func stop() {
        guard !reaped else { return }
        kill(pid, SIGKILL)
        _ = exitStatus()
    }

    /// Waits for the worker to exit: how it ended, in words, for an error message.
    func exitStatus() -> String {
        guard !reaped else { return "it had ended" }
        reaped = true
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return "its exit was not seen" }
        }
        let signal = status & 0x7f
        if signal != 0 { return "it was ended by signal \(signal)" }
        return "it exited with status \((status >> 8) & 0xff)"
    }

    /// An unlinked temporary file holding `request`, positioned at its start.
    private static func temporaryFile(
        holding request: Data, failure: (String) -> ImageDecodingError
    ) throws(ImageDecodingError) -> Int32 {
        var template = Array((FileManager.default.temporaryDirectory.path + "/webimage-decode-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("no temporary file") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let written = request.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let count = write(fd, base + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw failure("the request could not be written")
        }
        return fd
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), found at run time:
    /// Swift's Glibc module leaves it out. Without it, descriptors the server opened without
    /// close-on-exec live in the worker until it exits.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
}
