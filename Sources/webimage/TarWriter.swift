import Foundation

/// Writes a POSIX ustar archive to a file, one member at a time (512-byte header, the bytes,
/// zero padding to the next 512-byte block; two zero blocks end it): nothing of earlier members
/// is held. Member names are at most 100 bytes (callers keep them short: ``TarWriter/maxNameLength``).
///
/// ```swift
/// let tar = try TarWriter(path: "/tmp/00000.tar")
/// try tar.add(name: "000000000.jpg", data: bytes)
/// try tar.finish()
/// ```
final class TarWriter {
    /// The longest member name the ustar `name` field takes without its prefix field.
    static let maxNameLength = 100
    private static let block = 512
    /// The largest member ustar's 11 octal digits of size hold (8 GiB − 1).
    private static let maxSize = (1 << 33) - 1

    let path: String
    private var descriptor: Int32
    private let mtime = Int(Date().timeIntervalSince1970)

    /// Creates the file at `path` (it must not exist).
    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw TarWriterError.system(path, errno) }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Appends one regular file.
    func add(name: String, data: Data) throws {
        let nameBytes = Array(name.utf8)
        guard !nameBytes.isEmpty, nameBytes.count <= Self.maxNameLength, !nameBytes.contains(0) else { throw TarWriterError.badName(name) }
        guard data.count <= Self.maxSize else { throw TarWriterError.tooLarge(name) }
        var header = [UInt8](repeating: 0, count: Self.block)
        func put(_ bytes: [UInt8], at offset: Int) { header.replaceSubrange(offset..<offset + bytes.count, with: bytes) }
        func octal(_ value: Int, width: Int) -> [UInt8] {  // zero-padded digits and a NUL
            let digits = String(value, radix: 8)
            return Array((String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits).utf8) + [0]
        }
        put(nameBytes, at: 0)
        put(octal(0o644, width: 8), at: 100)  // mode
        put(octal(0, width: 8), at: 108)  // uid
        put(octal(0, width: 8), at: 116)  // gid
        put(octal(data.count, width: 12), at: 124)
        put(octal(mtime, width: 12), at: 136)
        put(Array("        ".utf8), at: 148)  // the checksum counts its own field as spaces
        header[156] = UInt8(ascii: "0")  // a regular file
        put(Array("ustar".utf8) + [0] + Array("00".utf8), at: 257)
        let checksum = header.reduce(0) { $0 + Int($1) }
        put(octal(checksum, width: 7) + [UInt8(ascii: " ")], at: 148)
        try write(header)
        try data.withUnsafeBytes { try write($0) }
        let padding = (Self.block - data.count % Self.block) % Self.block
        if padding > 0 { try write([UInt8](repeating: 0, count: padding)) }
    }

    /// Writes the end-of-archive blocks and closes the file.
    func finish() throws {
        try write([UInt8](repeating: 0, count: 2 * Self.block))
        let result = close(descriptor)
        descriptor = -1
        guard result == 0 else { throw TarWriterError.system(path, errno) }
    }

    private func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private func write(_ buffer: UnsafeRawBufferPointer) throws {
        guard descriptor >= 0 else { throw TarWriterError.system(path, EBADF) }
        var offset = 0
        while offset < buffer.count {
            let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw TarWriterError.system(path, errno)
            }
            offset += written
        }
    }
}

/// Why a tar member could not be written.
enum TarWriterError: Error, CustomStringConvertible {
    case system(String, Int32)
    case badName(String)
    case tooLarge(String)

    var description: String {
        switch self {
        case .system(let path, let code): "cannot write \((path as NSString).lastPathComponent): \(String(cString: strerror(code)))"
        case .badName(let name): "a tar member name must be 1 to \(TarWriter.maxNameLength) bytes: \(name.prefix(120))"
        case .tooLarge(let name): "\(name) is larger than a tar member can be (8 GiB)"
        }
    }
}
