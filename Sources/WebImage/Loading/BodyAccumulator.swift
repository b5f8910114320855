import Foundation

/// Reads a response body into memory under a size limit, reporting progress to the callers
/// of the shared download and keeping the bytes of a broken transfer for a later resume.
///
/// With a memory budget (`memory`), the bytes are reserved before they are allocated: a declared
/// length whole before the first byte is read (for the budget's lease, ``BodyLease``: then only
/// what has arrived), else as the body grows (256 KB, then doubling).
struct BodyAccumulator {
    let limit: Int
    let key: String
    let ticket: UInt64
    let context: DownloadContext
    let url: URL
    let memory: (any BodyMemoryReserving)?
    private(set) var data = Data()
    /// The full body length, when known (for a resumed body: kept bytes + the range's length).
    var expectedTotal: Int?
    /// What the memory budget holds for this body, and how many bytes in all.
    private var holds: [any BodyMemoryHolding] = []
    private var lease: BodyLease?
    private var reserved: Int { holds.reduce(0) { $0 + $1.bytes } }

    init(limit: Int, key: String, ticket: UInt64, context: DownloadContext, url: URL, memory: (any BodyMemoryReserving)?) {
        self.limit = limit
        self.key = key
        self.ticket = ticket
        self.context = context
        self.url = url
        self.memory = memory
    }

    /// Starts from bytes kept by an interrupted attempt.
    mutating func seed(_ bytes: Data, expectedTotal: Int?) {
        data = bytes
        self.expectedTotal = expectedTotal
    }

    mutating func collect(_ body: DataBody, response: DataResponse) async throws(AttemptFailure) -> DownloadResult {
        if let expectedTotal, expectedTotal > limit {
            // Refused from the declared length: not one body byte is read.
            throw AttemptFailure(.tooLarge(limit: limit, declared: expectedTotal))
        }
        var leaseEnding: Task<Void, Never>?
        defer { leaseEnding?.cancel() }
        if let expectedTotal, let memory {
            try await reserve(atLeast: expectedTotal)
            if let whole = holds.first {
                let lease = BodyLease(whole)
                _ = lease.arrived(data.count)
                leaseEnding = lease.ending(after: memory.bodyLease)
                self.lease = lease
            }
        }
        do {
            for try await chunk in body {
                let needed = data.count + chunk.count
                guard needed <= limit else { throw AttemptFailure(.tooLarge(limit: limit, declared: nil)) }
                // Counted as arrived before `reserved` is read: a lease that ends from here on
                // keeps these bytes.
                _ = lease?.arrived(needed)
                if needed > reserved {
                    let step = min(limit, memory?.bodyLimit ?? .max, expectedTotal ?? .max, max(2 * reserved, 256 << 10))
                    try await reserve(atLeast: max(needed, step))
                }
                if !data.isEmpty {
                    data.append(chunk)
                } else if let expectedTotal, chunk.count < expectedTotal {
                    // More to come: one buffer of the declared size, so appending never reallocates.
                    data.reserveCapacity(min(expectedTotal, limit))
                    data.append(chunk)
                } else {
                    // The whole body in one chunk (or a body of unknown length): kept as the loader
                    // made it, without another copy.
                    data = chunk
                }
                if context.registry.isObserved(key) {
                    context.registry.report(key: key, ticket: ticket, received: data.count, expected: expectedTotal, data: data)
                }
                if context.events.hasListeners {
                    context.events.send(.progress(url, received: data.count, expected: expectedTotal))
                }
            }
            try Task.checkCancellation()
        } catch let failure as AttemptFailure {
            throw failure
        } catch {
            keepForResume(response)
            throw AttemptFailure(ImageDownloadError(transportError: error))
        }
        if let expectedTotal, data.count != expectedTotal {
            keepForResume(response)
            throw AttemptFailure(.transport(underlying: BodyLengthMismatch(declared: expectedTotal, received: data.count)))
        }
        guard !data.isEmpty else { throw AttemptFailure(.emptyBody) }
        var result = DownloadResult(data: data, response: response)
        result.memoryHolds = holds.map { $0 as any AnyObject & Sendable }
        return result
    }

    /// Reserves room for `total` bytes of body in all, if there is a budget (before they are
    /// allocated: the declared length, or the next step of growth).
    private mutating func reserve(atLeast total: Int) async throws(AttemptFailure) {
        let reserved = reserved
        guard let memory, total > reserved else { return }
        do throws(ImageDownloadError) {
            holds.append(try await memory.reserveBody(total - reserved, holding: reserved))
        } catch {
            throw AttemptFailure(error)
        }
    }

    private func keepForResume(_ response: DataResponse) {
        context.resumables.keep(data, for: key, response: response, expectedTotal: expectedTotal)
    }
}
