/// What a ``DataCaching`` knows of an entry's size before reading its bytes
/// (``DataCaching/byteCount(for:)``): the pipeline makes room for that many bytes in its memory
/// budget before the read, and skips the read of an entry the cache knows it does not have.
///
/// ```swift
/// switch await disk.byteCount(for: key) {
/// case .bytes(let size): hold = try await budget.reserve(size, waitingAtMost: .seconds(5))
/// case .absent: return nil          // a miss without a read
/// case .unknown: break              // counted after the read
/// }
/// ```
public enum CachedByteCount: Sendable, Hashable {
    /// The cache cannot tell without reading the entry (the protocol's default).
    case unknown
    /// The cache has no entry for the key: reading it would be a miss.
    case absent
    /// The size the cache's index records for the entry. The read may still find the entry
    /// damaged or expired (a miss), or replaced by another process with one of another size.
    case bytes(Int)

    /// The recorded size, if there is one.
    public var bytes: Int? {
        if case .bytes(let count) = self { count } else { nil }
    }
}
