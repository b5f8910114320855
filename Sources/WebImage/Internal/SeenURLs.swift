/// The URLs a list has named so far, in bounded memory: which line met a URL first, exactly,
/// for the first ``FingerprintTable/capacity`` distinct URLs (1,572,864 by default, 24 MiB at
/// most); then a ``BloomFilter`` for the next `bloomCapacity` (10 million by default, 34 MiB,
/// a false-positive rate of at most 1e-6 when full), which knows a URL was met but not where;
/// past both, new URLs are counted in ``unremembered`` and not remembered (their repeats are not
/// detected: a repeat is fetched again rather than a new URL skipped).
///
/// URLs are compared by a 64-bit SipHash of their UTF-8 bytes keyed per process (Swift's
/// `Hasher`), so a list cannot be crafted to make two URLs collide; a false duplicate in the
/// exact part needs a 64-bit collision (about 1 in 10¹³ per URL at a million URLs).
///
/// ```swift
/// var seen = SeenURLs()
/// _ = seen.check("https://example.com/a.jpg", line: 1)  // .new
/// _ = seen.check("https://example.com/a.jpg", line: 2)  // .repeated(line: 1)
/// ```
package struct SeenURLs: Sendable {
    package enum Answer: Equatable, Sendable {
        /// Not met before (as far as is remembered).
        case new
        /// Met before: on this line, when it is known.
        case repeated(line: Int?)
    }

    package static let defaultExactSlots = 1 << 21
    package static let defaultBloomCapacity = 10_000_000
    package static let defaultFalsePositiveRate = 1e-6

    private var exact: FingerprintTable
    private var bloom: BloomFilter?
    private let bloomCapacity: Int
    private let falsePositiveRate: Double
    /// New URLs met once both parts were full: not remembered.
    package private(set) var unremembered = 0

    package init(
        exactSlots: Int = defaultExactSlots, bloomCapacity: Int = defaultBloomCapacity, falsePositiveRate: Double = defaultFalsePositiveRate
    ) {
        exact = FingerprintTable(maxSlots: exactSlots)
        self.bloomCapacity = bloomCapacity
        self.falsePositiveRate = falsePositiveRate
    }

    /// The memory both parts take now.
    package var byteCount: Int { exact.byteCount + (bloom?.byteCount ?? 0) }

    /// Whether the Bloom filter is in use (URLs met from now on are reported without a line).
    package var isApproximate: Bool { bloom != nil }

    /// Whether `url` was met before; if not, remembers it as met on `line` (1-based; a line
    /// number over `UInt32.max` is remembered without its number).
    package mutating func check(_ url: String, line: Int) -> Answer {
        let fingerprint = Self.fingerprint(url)
        if bloom == nil {
            switch exact.insert(fingerprint, value: UInt32(exactly: line) ?? 0) {
            case .inserted: return .new
            case .present(let first): return .repeated(line: first == 0 ? nil : Int(first))
            case .full: bloom = BloomFilter(capacity: bloomCapacity, falsePositiveRate: falsePositiveRate)
            }
        } else if let first = exact.value(of: fingerprint) {
            return .repeated(line: first == 0 ? nil : Int(first))
        }
        guard var filter = bloom else { return .new }
        bloom = nil  // uniquely referenced while inserting (no copy of the bits)
        defer { bloom = filter }
        if filter.count < filter.capacity { return filter.insert(fingerprint) ? .repeated(line: nil) : .new }
        if filter.contains(fingerprint) { return .repeated(line: nil) }
        unremembered += 1
        return .new
    }

    /// A 64-bit SipHash of the URL's UTF-8 bytes, keyed per process.
    package static func fingerprint(_ url: String) -> UInt64 {
        var hasher = Hasher()
        var text = url
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }
}
