/// Reserves memory for a response body before its bytes are read.
///
/// The pipeline passes its memory budget this way (`MemoryBudget.Bodies`), so that bodies in
/// flight count against it as decoded pixels do; the downloader itself knows no budget. A body
/// whose `Content-Length` is known reserves it whole before the first byte is read, guaranteed for
/// ``bodyLease``; one of unknown length reserves 256 KB first, then grows, doubling, up to the
/// downloader's body limit.
protocol BodyMemoryReserving: Sendable {
    /// The most one body can ever hold (the whole budget): growth steps stop there.
    var bodyLimit: Int { get }

    /// How long a declared body's whole reservation stands; after it, the part that has not
    /// arrived is given back and the rest is reserved in growth steps (``BodyLease``).
    var bodyLease: Duration { get }

    /// Holds `bytes` more for a body that already holds `holding` (its earlier steps), until the
    /// returned object is deallocated. A body's first step waits for room; a later step is granted
    /// from the room there is now or refused at once (it must not wait for room held by loads
    /// queued behind it).
    ///
    /// - Throws: `ImageDownloadError.overMemoryBudget` when there is no room (in time, for a first
    ///   step), or `.cancelled`.
    func reserveBody(_ bytes: Int, holding: Int) async throws(ImageDownloadError) -> any BodyMemoryHolding
}

/// Reserved bytes for a body, held until the object is deallocated.
protocol BodyMemoryHolding: AnyObject, Sendable {
    /// The bytes reserved now.
    var bytes: Int { get }
    /// Gives back all but `bytes` (nothing when it holds no more than that).
    func shrink(to bytes: Int)
}
