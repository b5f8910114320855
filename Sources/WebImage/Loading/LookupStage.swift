import Foundation

/// The first stage of two-stage loading: fetch the look-up URL and read the real
/// image URL from its answer, reusing answers while their caching headers allow.
///
/// The caller holds a queue slot (taken at low priority) while this runs.
struct LookupStage {
    let context: DownloadContext

    /// The image URL for `url` if a fresh look-up answer is kept.
    func cachedImageURL(for url: URL) -> URL? {
        guard let cached = context.lookups.imageURL(for: url) else { return nil }
        context.metrics.lookupReuses.increment()
        return cached
    }

    func resolve(_ url: URL, with resolver: any URLResolving) async throws -> URL {
        var request = resolver.lookupRequest(for: url)
        request.timeout = context.configuration.timeout
        request.headers += context.configuration.headers.filter { $0.name.lowercased() != "accept" }
        context.events.send(.started(url))
        let transfer: DataTransfer
        do {
            transfer = try await context.loader.loadData(for: request)
        } catch {
            throw ImageDownloadError(transportError: error)
        }
        guard (200..<300).contains(transfer.response.statusCode) else {
            throw ImageDownloadError.resolverFailed("the look-up answered status \(transfer.response.statusCode)")
        }
        var body = Data()
        do {
            for try await chunk in transfer.body {
                body.append(chunk)
                guard body.count <= 256 * 1024 else { throw ImageDownloadError.resolverFailed("the look-up answer is too large") }
            }
        } catch let error as ImageDownloadError {
            throw error
        } catch {
            throw ImageDownloadError(transportError: error)
        }
        let imageURL: URL
        do {
            imageURL = try resolver.imageURL(from: transfer.response, body: body, for: url)
        } catch let error as ImageDownloadError {
            throw error
        } catch {
            throw ImageDownloadError.resolverFailed("\(error)")
        }
        context.lookups.store(imageURL, for: url, response: transfer.response)
        context.logger.debug("look-up resolved", metadata: ["url": "\(url)", "image": "\(imageURL)"])
        return imageURL
    }
}
