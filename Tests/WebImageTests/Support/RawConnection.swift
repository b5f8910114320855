import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to a loopback port, for tests that act as hostile clients (slow,
/// idle, oversized heads). Only ever connects to 127.0.0.0/8; `source` picks the client address
/// (Linux routes all of 127/8 to lo), so one test can be several clients. Call it off the
/// cooperative pool (`offPool`): every call blocks.
///
/// `@unchecked Sendable`: `descriptor` is set once in init and closed once (under `lock`); the
/// tests use a connection from one thread at a time.
final class RawConnection: @unchecked Sendable {
    enum Reading: Equatable { case bytes(Data), closed, quiet }
    struct Failure: Error, CustomStringConvertible { var description: String }

    private var descriptor: Int32
    private let lock = NSLock()

    /// `receiveBuffer`: the socket's receive buffer in bytes (`SO_RCVBUF`, set before connecting),
    /// for a client that reads slowly or not at all.
    init(port: Int, source: String = "127.0.0.1", receiveBuffer: Int? = nil) throws {
        guard source.hasPrefix("127.") else { throw Failure(description: "loopback only, not \(source)") }
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer.map(Int32.init) {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = Self.address(source, port: 0), remote = Self.address("127.0.0.1", port: port)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) } }
        guard bound == 0, connected == 0 else {
            let error = errno
            Glibc.close(descriptor)
            throw Failure(description: "bind/connect from \(source): errno \(error)")
        }
    }

    deinit { close() }

    private static func address(_ text: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = inet_pton(AF_INET, text, &address.sin_addr)
        return address
    }

    /// Sends `text`; `false` when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// What arrives within `timeout`: some bytes, the end of the connection, or nothing.
    func read(timeout: Duration) -> Reading {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&poller, 1, milliseconds) > 0 else { return .quiet }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? .bytes(Data(buffer[0..<count])) : .closed
    }

    /// Reads until the server closes the connection; how long that took, or `nil` if it was still
    /// open after `limit`.
    func timeUntilClosed(limit: Duration) -> Duration? {
        let clock = ContinuousClock(), start = clock.now
        while clock.now - start < limit {
            if read(timeout: .milliseconds(100)) == .closed { return clock.now - start }
        }
        return nil
    }

    /// Sends `text` and reads the answer's status line (`nil` when the connection closed first).
    func status(after text: String, timeout: Duration = .seconds(10)) -> Int? {
        send(text)
        var received = Data()
        let clock = ContinuousClock(), start = clock.now
        reading: while clock.now - start < timeout, !received.contains(0x0A) {
            switch read(timeout: .milliseconds(200)) {
            case .bytes(let bytes): received.append(bytes)
            case .closed: break reading
            case .quiet: continue
            }
        }
        let line = String(decoding: received.prefix(while: { $0 != 0x0A }), as: UTF8.self)
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// Closes the sending side only (`shutdown(SHUT_WR)`): the server reads the end of the request stream.
    func closeSending() {
        lock.lock()
        defer { lock.unlock() }
        if descriptor >= 0 { _ = shutdown(descriptor, Int32(SHUT_WR)) }
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
