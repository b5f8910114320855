#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a large cache entry past the kernel's page cache (`O_DIRECT`, Linux only).
///
/// Why: a buffered write of a new file takes fresh page-cache pages, and on a machine whose
/// memory is already full of cached files (any busy server, or this project's build machines)
/// the kernel reclaims older pages for them on the writing thread. Measured on the 2-core VM
/// (24 files of 3 MB into a new folder, each in a new process): 22–177 ms of CPU buffered,
/// 24–29 ms direct, the difference being reclaim, page zeroing and the copy into the cache
/// (`copy_folio_from_iter_atomic` was 12.5 % of a thumbnailing `fetch` with the cache on).
/// The device does the transfer, so the write waits for the disk (about 3 ms per 3 MB
/// there), which the cache's write lane absorbs. Reads are unchanged (buffered): the first read
/// of the entry comes from the disk instead of memory, later ones from the page cache as usual.
///
/// `O_DIRECT` needs the buffer, the offset and the length aligned to the device's block size:
/// the bytes are copied, `chunkSize` at a time, into one 4 KiB-aligned buffer of at most that
/// size and written from it (the last chunk padded to a multiple of 4 KiB), and the file is cut
/// back to its length. So writing an entry takes at most 4 MiB more memory, not a second copy of
/// the whole entry. A file system that refuses `O_DIRECT` (tmpfs, some
/// network and FUSE file systems: `EINVAL` at `open` or at the first write) gets `nil`, and the
/// caller writes the usual way.
enum DirectWrite {
    /// The alignment of buffer, offsets and lengths: 4 KiB covers 512-byte and 4 KiB sectors.
    static let alignment = 4096

    /// The most bytes copied into the aligned buffer and written at a time (a multiple of
    /// `alignment`): 4 MiB keeps one write per photo-sized entry.
    static let chunkSize = 4 << 20

    /// `O_DIRECT`, which Glibc's Swift module leaves out (it needs `_GNU_SOURCE`): the values of
    /// Linux's `asm-generic/fcntl.h` and of the architectures that differ from it.
    static var openFlag: Int32? {
        #if os(Linux) && (arch(x86_64) || arch(i386))
        0o40000
        #elseif os(Linux) && (arch(arm64) || arch(arm))
        0o200000
        #else
        nil
        #endif
    }

    /// Writes `bytes` to the new file `path` (created with `O_EXCL`): the open descriptor, for
    /// the caller to sync and close; nil when the file system refuses direct I/O (nothing is
    /// left behind then); the `errno` of any other failure (the file removed).
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String) -> Result<Int32, DirectWriteFailure>? {
        guard let direct = openFlag else { return nil }
        let padded = (bytes.count + alignment - 1) / alignment * alignment
        guard bytes.count > 0, padded >= bytes.count else { return nil }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | direct, 0o644)
        if descriptor < 0 { return errno == EINVAL ? nil : .failure(.init(errno: errno)) }
        let capacity = min(padded, chunkSize)
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, alignment, capacity) == 0, let buffer = raw else {
            close(descriptor)
            unlink(path)
            return .failure(.init(errno: ENOMEM))
        }
        defer { free(buffer) }
        var offset = 0
        while offset < padded {
            // `offset` is a multiple of `alignment` below `padded`, so bytes remain past it.
            let length = min(capacity, padded - offset)
            let present = min(length, bytes.count - offset)
            buffer.copyMemory(from: bytes.baseAddress! + offset, byteCount: present)
            (buffer + present).initializeMemory(as: UInt8.self, repeating: 0, count: length - present)
            var done = 0
            while done < length {
                let written = pwrite(descriptor, buffer + done, length - done, off_t(offset + done))
                if written < 0 && errno == EINTR { continue }
                // A short write of direct I/O stops at a block boundary; anything else (or a
                // refusal of the alignment) falls back to a buffered write of a new file.
                guard written > 0, written % alignment == 0 else {
                    let failure = errno
                    close(descriptor)
                    unlink(path)
                    return written < 0 && failure != EINVAL ? .failure(.init(errno: failure)) : nil
                }
                done += written
            }
            offset += length
        }
        guard ftruncate(descriptor, off_t(bytes.count)) == 0 else {
            let failure = errno
            close(descriptor)
            unlink(path)
            return .failure(.init(errno: failure))
        }
        return .success(descriptor)
    }
}

/// An `errno` from ``DirectWrite``.
struct DirectWriteFailure: Error {
    let errno: Int32
    var reason: String { String(cString: strerror(errno)) }
}
