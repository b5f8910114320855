import Foundation

/// Lines of a file handle, read 64 KB at a time (UTF-8; `\r\n`, `\n` and `\r` endings), holding at
/// most `maxLineLength` bytes of one line: a longer line (a stranger's list with no newline in a
/// gigabyte) is skipped to its end as it is read and reported as ``Line/tooLong``.
///
/// ```swift
/// let reader = LineReader(handle: .standardInput)
/// while let line = reader.next() { if case .text(let text) = line { use(text) } }
/// ```
final class LineReader {
    enum Line: Equatable {
        case text(String)
        /// A line longer than ``LineReader/maxLineLength``: its bytes were dropped unread.
        case tooLong
    }

    /// The longest line kept: 64 KB, far beyond any URL a server accepts (8 KB is common).
    static let maxLineLength = 64 * 1024

    private let handle: FileHandle
    private let maxLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`; consumed bytes are dropped once per read.
    private var position = 0
    private var finished = false
    /// One `read(2)`'s worth.
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    init(handle: FileHandle, maxLineLength: Int = LineReader.maxLineLength) {
        self.handle = handle
        self.maxLineLength = maxLineLength
    }

    /// The next line's text, skipping lines that are too long; `nil` at the end.
    func nextLine() -> String? {
        while let line = next() {
            if case .text(let text) = line { return text }
        }
        return nil
    }

    /// The next line, or `nil` at the end.
    func next() -> Line? {
        while true {
            if let (end, next) = lineEnd() {
                defer { position = next }
                guard end - position <= maxLineLength else { return .tooLong }
                return .text(String(decoding: buffer[position..<end], as: UTF8.self))
            }
            if buffer.count - position > maxLineLength + 1 {  // + 1: room for a `\r` before the `\n`
                skipRestOfLine()
                return .tooLong
            }
            if finished {
                guard position < buffer.count else { return nil }
                defer { position = buffer.count }
                guard buffer.count - position <= maxLineLength else { return .tooLong }
                return .text(String(decoding: buffer[position...], as: UTF8.self))
            }
            read()
        }
    }

    /// Drops bytes up to and including the next newline (or to the end of the input).
    private func skipRestOfLine() {
        while true {
            if let (_, next) = lineEnd() {
                position = next
                return
            }
            position = buffer.count
            if finished { return }
            read()
        }
    }

    /// Where the line from `position` ends and the next begins: at the first `\n`, `\r\n` or lone
    /// `\r` (old Mac files, which Python's `csv` reads as lines too). `nil` when the buffer holds
    /// no ending yet, or ends in a `\r` whose next byte is still to be read. `memchr`: a line of
    /// megabytes is scanned at memory speed, not a byte at a time.
    private func lineEnd() -> (end: Int, next: Int)? {
        guard position < buffer.count else { return nil }
        return buffer.withUnsafeBytes { bytes -> (Int, Int)? in
            let base = bytes.baseAddress!
            let newline = memchr(base + position, 0x0A, bytes.count - position).map { UnsafeRawPointer($0) - base }
            let searched = (newline ?? bytes.count) - position
            guard let cr = memchr(base + position, 0x0D, searched).map({ UnsafeRawPointer($0) - base }) else {
                return newline.map { ($0, $0 + 1) }
            }
            if cr + 1 < bytes.count { return (cr, bytes[cr + 1] == 0x0A ? cr + 2 : cr + 1) }
            return finished ? (cr, cr + 1) : nil
        }
    }

    /// Drops the consumed bytes and reads the next chunk (or notes the end): what one `read(2)`
    /// gives, so a line written to a pipe is seen at once (`FileHandle.read(upToCount:)` waits
    /// for the whole count or the end).
    private func read() {
        buffer.removeFirst(position)
        position = 0
        var count: Int
        repeat {
            count = scratch.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress!, $0.count) }
        } while count < 0 && errno == EINTR
        guard count > 0 else {
            finished = true
            return
        }
        scratch.withUnsafeBytes { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}
