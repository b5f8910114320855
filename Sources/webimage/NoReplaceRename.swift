import Foundation

/// Renames a file only when its new name is free, atomically: Linux `renameat2` with
/// `RENAME_NOREPLACE` (looked up in the C library at run time: Swift's Glibc module declares
/// neither the function nor the flag, and `syscall` is variadic), else `link` + `unlink`, which
/// fails with `EEXIST` just the same. Never a check followed by a rename, which another process
/// could slip a file between.
///
/// ```swift
/// switch try NoReplaceRename.move(temporary, to: final) { case .moved: …; case .taken: pickAnotherName() }
/// ```
enum NoReplaceRename {
    enum Outcome { case moved, taken }

    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    /// `RENAME_NOREPLACE` from `<linux/fs.h>`.
    private static let noReplace: UInt32 = 1
    private static let renameat2: RenameAt2? = dlsym(nil, "renameat2").map { unsafeBitCast($0, to: RenameAt2.self) }

    /// Moves `source` to `destination` unless `destination` exists (then `.taken`, and `source`
    /// stays). Throws the system's error for anything else.
    static func move(_ source: String, to destination: String) throws -> Outcome {
        if let renameat2 {
            if renameat2(AT_FDCWD, source, AT_FDCWD, destination, noReplace) == 0 { return .moved }
            if errno == EEXIST { return .taken }
            // A file system (or kernel) without the flag: fall through to link + unlink.
            guard errno == EINVAL || errno == ENOSYS else { throw POSIXFailure(errno) }
        }
        if link(source, destination) == 0 {
            unlink(source)
            return .moved
        }
        if errno == EEXIST { return .taken }
        throw POSIXFailure(errno)
    }

    /// An `errno`, with the system's text for it.
    struct POSIXFailure: Error, CustomStringConvertible {
        let code: Int32
        init(_ code: Int32) { self.code = code }
        var description: String { String(cString: strerror(code)) }
    }
}
