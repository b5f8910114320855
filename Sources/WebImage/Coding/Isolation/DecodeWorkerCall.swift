import CoreMetrics
import Foundation

/// One isolated decode: the request sent, the worker's reply read and checked, the image made.
/// Each ends in `webimage_isolated_decodes_total{outcome}`: `decoded`, `refused` (the worker's
/// typed error, such as a corrupt file), `cancelled` (the worker killed at a cancel), `killed`
/// (the worker killed from outside: ``ImageDecodingError/workerKilled(format:)``), or `failed`
/// (the worker could not start, died, or sent a reply that does not hold).
struct DecodeWorkerCall {
    let worker: DecodeIsolation.Worker
    let format: ImageFormat
    let options: ImageDecodingOptions
    /// Whether a worker is started ahead for the next decode (``DecodeIsolation/keepsSpareWorker``).
    var keepsSpare = true
    /// The memory the decode may take in the worker (``WorkerMemory``), `nil` for no limit.
    var memoryLimit: Int?

    func decode(_ data: Data) throws(ImageDecodingError) -> Image {
        var outcome = "failed"
        defer { Counter(label: "webimage_isolated_decodes_total", dimensions: [("outcome", outcome)]).increment() }
        let description: Data
        do {
            description = try DecodeWorkerWire.framed(DecodeWorkerRequest(format: format, options: options, memoryLimit: memoryLimit))
        } catch {
            throw .corrupt(format: format, reason: "the decode request could not be written: \(error)")
        }
        let process = try DecodeWorkerSpares.take(worker, format: format)
        defer { if keepsSpare { DecodeWorkerSpares.replenish(worker, format: format) } }
        do throws(ImageDecodingError) {
            // A worker gone before it read everything is seen at its reply's end.
            _ = try process.send([description, data])
            let reply = try readReply(from: process)
            if let failure = reply.error {
                outcome = "refused"
                throw failure.error(decoding: format)
            }
            let counts = try reply.checked(against: options)
            var arrays: [[UInt8]] = []
            for count in counts {
                arrays.append(try readPixels(count: count, from: process))
            }
            process.stop()
            outcome = "decoded"
            return reply.image(pixels: arrays)
        } catch {
            process.stop()
            if error == .cancelled { outcome = "cancelled" }
            if error == .workerKilled(format: format) { outcome = "killed" }
            throw error
        }
    }

    private func readReply(from process: DecodeWorkerProcess) throws(ImageDecodingError) -> DecodeWorkerReply {
        guard let prefix = try process.read(count: 4) else { throw ended(process) }
        guard let length = DecodeWorkerWire.descriptionLength(prefix) else { throw malformed("a description too long") }
        guard let json = try process.read(count: length) else { throw ended(process) }
        guard let reply = try? JSONDecoder().decode(DecodeWorkerReply.self, from: json) else { throw malformed("an unreadable description") }
        guard reply.version == DecodeWorkerWire.version else { throw malformed("version \(reply.version), not \(DecodeWorkerWire.version)") }
        return reply
    }

    private func readPixels(count: Int, from process: DecodeWorkerProcess) throws(ImageDecodingError) -> [UInt8] {
        var complete = false
        var failure: ImageDecodingError?
        // Read straight into the image's array: no second copy of the pixels in the server.
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(ImageDecodingError) {
                complete = try process.read(into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
            }
            // Uninitialised bytes are never handed out: the array is dropped unless complete.
            initialized = count
        }
        if let failure { throw failure }
        guard complete else { throw ended(process) }
        return pixels
    }

    /// The worker ended before its reply did: it crashed or aborted on the file (`corrupt`), or
    /// something outside killed it (`workerKilled`: the file is not to blame).
    private func ended(_ process: DecodeWorkerProcess) -> ImageDecodingError {
        let status = process.exitStatus()
        if process.killedElsewhere { return .workerKilled(format: format) }
        return .corrupt(format: format, reason: "the decode worker ended before its reply: \(status)")
    }

    private func malformed(_ what: String) -> ImageDecodingError {
        .corrupt(format: format, reason: "the decode worker sent \(what)")
    }
}
