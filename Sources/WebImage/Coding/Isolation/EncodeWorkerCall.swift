import CoreMetrics
import Foundation

/// One isolated encode: the image sent, the worker's file read and checked. Each ends in
/// `webimage_isolated_encodes_total{outcome}`: `encoded`, `refused` (the encoder's own error),
/// `cancelled` (the worker killed at a cancel), `killed` (killed from outside:
/// ``ImageEncodingError/workerKilled(format:)``), or `failed` (the worker could not start, died,
/// or sent a reply that does not hold).
struct EncodeWorkerCall {
    let worker: DecodeIsolation.Worker
    let format: ImageFormat
    var keepsSpare = true

    func encode(_ image: Image, quality: Double) throws(ImageEncodingError) -> Data {
        var outcome = "failed"
        defer { Counter(label: "webimage_isolated_encodes_total", dimensions: [("outcome", outcome)]).increment() }
        let description: Data
        do {
            var request = DecodeWorkerRequest(format: format, options: .default)
            request.encode = EncodeOrder(quality: quality, image: DecodeWorkerReply(image))
            description = try DecodeWorkerWire.framed(request)
        } catch {
            throw .encodingFailed(format: format, reason: "the encode request could not be written: \(error)")
        }
        let process: DecodeWorkerProcess
        do { process = try DecodeWorkerSpares.take(worker, format: format) } catch { throw encoding(error) }
        defer { if keepsSpare { DecodeWorkerSpares.replenish(worker, format: format) } }
        do throws(ImageDecodingError) {
            let arrays: [[UInt8]] = image.frames.isEmpty ? [image.pixels] : image.frames.map(\.pixels)
            _ = try process.send([description] + arrays)
            guard let prefix = try process.read(count: 4) else { throw ended(process) }
            guard let length = DecodeWorkerWire.descriptionLength(prefix), let json = try process.read(count: length) else { throw ended(process) }
            guard let reply = try? JSONDecoder().decode(EncodeWorkerReply.self, from: json), reply.version == DecodeWorkerWire.version else {
                throw .corrupt(format: format, reason: "the encode worker sent an unreadable reply")
            }
            if let error = reply.error {
                process.stop()
                outcome = reply.cancelled ? "cancelled" : "refused"
                throw reply.cancelled ? ImageDecodingError.cancelled : .corrupt(format: format, reason: error)
            }
            guard (0...EncodeWorkerReply.maxByteCount(for: image)).contains(reply.byteCount) else {
                throw .corrupt(format: format, reason: "the encode worker reported a file of \(reply.byteCount) bytes")
            }
            guard let file = try process.read(count: reply.byteCount) else { throw ended(process) }
            process.stop()
            outcome = "encoded"
            return file
        } catch {
            process.stop()
            if error == .cancelled, outcome == "failed" { outcome = "cancelled" }
            if case .workerKilled = error { outcome = "killed" }
            throw encoding(error)
        }
    }

    /// A worker's failure as the encoder's error.
    private func encoding(_ error: ImageDecodingError) -> ImageEncodingError {
        switch error {
        case .cancelled: .cancelled
        case .workerKilled: .workerKilled(format: format)
        case let .libraryUnavailable(_, reason): .libraryUnavailable(format: format, reason: reason)
        case let .corrupt(_, reason): .encodingFailed(format: format, reason: reason)
        default: .encodingFailed(format: format, reason: "\(error)")
        }
    }

    private func ended(_ process: DecodeWorkerProcess) -> ImageDecodingError {
        let status = process.exitStatus()
        if process.killedElsewhere { return .workerKilled(format: format) }
        return .corrupt(format: format, reason: "the encode worker ended before its reply: \(status)")
    }
}
