import Foundation
import Hummingbird
import Logging
import NIOCore
import WebImage

/// The checks and limits every route that fetches a source goes through (`/img`, `/info`), in
/// one place: signature, allow-list, a render slot, the guarded fetch, the source pixel limit,
/// a memory reservation, and work on the render threads under the processing deadline.
extension ImageServer {
    /// The signature over the whole request URI, when signing is on.
    func verifySignature(_ request: Request) throws(ImageServerError) {
        if signer.isEnabled, !signer.verify(request.uri.description) {
            throw ImageServerError(status: 403, code: "bad_signature", message: "the signature is missing or wrong")
        }
    }

    /// The parsed source against the allow-list (each redirect hop is checked again by the loader).
    func checkAllowed(_ source: SourceURL) throws(ImageServerError) {
        if source.scheme == SourceURL.localScheme, configuration.localRoot == nil {
            throw ImageServerError(status: 403, code: "source_not_allowed", message: "this server reads no local:// sources (no --local-root)")
        }
        if source.scheme == SourceURL.s3Scheme, configuration.s3 == nil {
            throw ImageServerError(status: 403, code: "source_not_allowed", message: "this server fetches no s3:// sources (no --use-s3)")
        }
        guard allowList.allows(source) else {
            throw ImageServerError(status: 403, code: "source_not_allowed", message: "this source is not on the allowed list")
        }
    }

    /// A render slot, then the source's bytes and header through the pipeline (guarded loader,
    /// source caches; ``fetchWithinDeadline(_:slot:watch:)``), refused when the header declares more pixels than the server decodes. The slot
    /// is held on success (the caller releases it, or hands it to ``runOffPool(bytes:for:slot:watch:source:_:)``)
    /// and released on every failure. Also returns the client's connection watch, for the render:
    /// a client that left while waiting for its slot or its source gets no render.
    func fetchSource(
        _ url: URL, request: Request, client: RequestClient, timing: inout [(String, Duration)]
    ) async throws(ImageServerError) -> (ImageDataResponse, RenderQueue.Slot, ConnectionWatch?) {
        let clock = ContinuousClock()
        let watch = await client.watch()
        // The wait for a slot listens to the client too: one that leaves gives its place back at once.
        let queue = self.queue, name = self.client(of: request, peer: client.peer)
        let entered = await ConnectionWatch.waiting(watch) { await queue.enter(client: name) }
        if watch?.isClosed == true {
            entered?.release()
            throw .clientClosed
        }
        guard let slot = entered else { throw .busy }
        let fetchStart = clock.now
        let original = try await fetchWithinDeadline(url, slot: slot, watch: watch)
        if original.source == .network { metrics.bytesIn.increment(by: original.data.count) }
        timing.append(("fetch", clock.now - fetchStart))
        metrics.stage("fetch", clock.now - fetchStart)
        if original.header.totalPixelCount > configuration.maxSourcePixels {
            slot.release()
            throw ImageServerError(ImageDecodingError.tooManyPixels(
                width: original.header.pixelWidth, height: original.header.pixelHeight,
                frames: original.header.frameCount, limit: configuration.maxSourcePixels))
        }
        return (original, slot, watch)
    }

    /// The source's bytes and header through the pipeline, stopped when the client leaves or
    /// when the fetch timeout and the processing timeout have both passed: the loader keeps to
    /// the first, and the header walk that follows (a GIF of three million frames, an APNG of
    /// 700,000 — red team, stop 50) looks at the cancel as it goes. Holding `slot` until the
    /// fetch's task has ended, whatever the answer: releases it on every failure.
    private func fetchWithinDeadline(
        _ url: URL, slot: RenderQueue.Slot, watch: ConnectionWatch?
    ) async throws(ImageServerError) -> ImageDataResponse {
        let pipeline = self.pipeline, logger = self.logger
        let fetching = Task { () -> Result<ImageDataResponse, ImagePipelineError> in
            do throws(ImagePipelineError) {
                return .success(try await pipeline.data(for: ImageRequest(url: url).options([.queryMemoryData, .waitStoreCache])))
            } catch {
                return .failure(error)
            }
        }
        let timeout = configuration.fetchTimeout + configuration.processingTimeout
        guard let outcome = await Deadline.value(of: fetching, timeout: timeout, closing: watch) else {
            // The walk stops at its next look at the cancel; the slot is given back then.
            Task {
                _ = await fetching.value
                slot.release()
            }
            if watch?.isClosed == true {
                logger.info("client left; source fetch stopped", metadata: ["url": "\(url.absoluteString)"])
                throw .clientClosed
            }
            logger.warning("source fetch and header read timed out", metadata: ["url": "\(url.absoluteString)"])
            throw .processingTimeout
        }
        switch outcome {
        case .success(let original):
            return original
        case .failure(let error):
            slot.release()
            // A departure cancels the fetch, which may fail ("download cancelled") before the
            // deadline has seen the close: still the client's doing, a 499, not the source's 502.
            if watch?.isClosed == true {
                logger.info("client left; source fetch stopped", metadata: ["url": "\(url.absoluteString)"])
                throw .clientClosed
            }
            if case .loadingFailed(.transport(let underlying)) = error, !(underlying is AddressRefusal) {
                logger.info("source fetch failed", metadata: ["url": "\(url.absoluteString)", "error": "\(underlying)"])
            }
            throw ImageServerError(error)
        }
    }

    /// `work` on the render threads, not the cooperative pool (however heavy, it leaves the event
    /// loops, timers, `/health` and cache hits their threads), once `bytes` of the memory budget
    /// are reserved (waiting at most the processing timeout, then 503, or until the client
    /// leaves, then 499; 422 when more than the whole budget beside what `original` holds), under the processing deadline, and stopped when
    /// the client leaves (`watch`). Releases `slot` and the reservation when done; `original`'s
    /// bytes stay reserved until the work ends.
    func runOffPool<T: Sendable>(
        bytes: Int, for original: ImageDataResponse, slot: RenderQueue.Slot, watch: ConnectionWatch?, source: String,
        _ work: @escaping @Sendable () throws(ImageServerError) -> T
    ) async throws(ImageServerError) -> T {
        let reservation: MemoryBudget.Reservation
        let held = original.reservedBytes
        let budget = memoryBudget, wait = configuration.processingTimeout
        // The wait for room listens to the client, as the wait for a slot does.
        let reserved = await ConnectionWatch.waiting(watch) { () -> Result<MemoryBudget.Reservation, MemoryBudgetError> in
            do throws(MemoryBudgetError) {
                return .success(try await budget.reserve(bytes, waitingAtMost: wait, holding: held))
            } catch {
                return .failure(error)
            }
        }
        switch reserved {
        case .success(let granted):
            reservation = granted
        case .failure:
            slot.release()
            if watch?.isClosed == true { throw .clientClosed }
            throw bytes > memoryBudget.limit - min(held, memoryBudget.limit)
                ? ImageServerError(status: 422, code: "output_too_large", message: "the render would need \(bytes >> 20) MB, more than the server's memory budget")
                : ImageServerError.overBudget
        }
        let task = Task.detached(executorPreference: renderExecutor) { () -> Result<T, ImageServerError> in
            defer {
                reservation.release()
                slot.release()
            }
            do throws(ImageServerError) {
                return .success(try withExtendedLifetime(original) { () throws(ImageServerError) in try work() })
            } catch {
                return .failure(error)
            }
        }
        guard let outcome = await Deadline.value(of: task, timeout: configuration.processingTimeout, closing: watch) else {
            if watch?.isClosed == true {
                logger.info("client left; render stopped", metadata: ["url": "\(source)"])
                throw .clientClosed
            }
            logger.warning("render timed out", metadata: ["url": "\(source)"])
            throw .processingTimeout
        }
        // The same race on the render: stopped by the departure, it fails as cancelled.
        if case .failure = outcome, watch?.isClosed == true { throw .clientClosed }
        return try outcome.get()
    }

    /// Who a request counts against for the per-client limit: the peer's address; behind a
    /// proxy on a loopback or private address, the address that proxy appended last to
    /// `X-Forwarded-For` (earlier entries come from the client and can be anything).
    func client(of request: Request, peer: SocketAddress?) -> String? {
        guard configuration.maxRendersPerClient != nil else { return nil }
        let peerAddress = peer?.ipAddress
        let proxied = peerAddress.flatMap { IPAddress($0) }.map { AddressClassifier.classify($0) != nil } ?? true
        if proxied, let forwarded = request.headers[HTTPFields.Element.Name("X-Forwarded-For")!],
           let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return last
        }
        return peerAddress
    }
}
