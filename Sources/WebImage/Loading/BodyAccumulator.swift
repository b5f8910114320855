import Foundation

/// Reads a response body into memory under a size limit, reporting progress to the callers
/// of the shared download and keeping the bytes of a broken transfer for a later resume.
struct BodyAccumulator {
    let limit: Int
    let key: String
    let ticket: UInt64
    let context: DownloadContext
    let url: URL
    private(set) var data = Data()
    /// The full body length, when known (for a resumed body: kept bytes + the range's length).
    var expectedTotal: Int?

    init(limit: Int, key: String, ticket: UInt64, context: DownloadContext, url: URL) {
        self.limit = limit
        self.key = key
        self.ticket = ticket
        self.context = context
        self.url = url
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
        do {
            for try await chunk in body {
                guard data.count + chunk.count <= limit else { throw AttemptFailure(.tooLarge(limit: limit, declared: nil)) }
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
        return DownloadResult(data: data, response: response)
    }

    private func keepForResume(_ response: DataResponse) {
        context.resumables.keep(data, for: key, response: response, expectedTotal: expectedTotal)
    }
}
