import Foundation

/// The worker side of an isolated decode: what a program runs when it is started as a decode
/// worker (see ``DecodeIsolation``). It reads one request from standard input, decodes it with
/// the built-in coders, writes the image (or the typed error) to standard output and returns the
/// exit status.
///
/// A program that isolates decodes starts itself as its worker, as browsers start their
/// renderers, so the worker is always of the same build. Call it first thing in `main`:
///
/// ```swift
/// if CommandLine.arguments.dropFirst().first == "decode-worker" {
///     exit(DecodeWorker.run())
/// }
/// let coders = ImageCoderRegistry.default.isolatingDecodes(
///     DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"])))
/// ```
///
/// `webimage` has this as its hidden `decode-worker` subcommand.
public enum DecodeWorker {
    /// Serves one decode from standard input to standard output; 0 when a reply (an image or a
    /// typed error) was written, 1 when the request could not be read or the reply not written.
    public static func run() -> Int32 {
        #if canImport(Glibc)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)  // a C decoder's crash leaves no core file
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
        // When memory runs out, the kernel's out-of-memory killer is to choose a worker, which
        // costs one request (`workerKilled`, a 503), before the server it serves. Raising one's
        // own score needs no privilege; a failure leaves the default.
        if let adjust = FileHandle(forWritingAtPath: "/proc/self/oom_score_adj") {
            try? adjust.write(contentsOf: Data("1000".utf8))
            try? adjust.close()
        }
        #endif
        // A worker is usually started ahead of its request (a spare): the codec libraries load while it waits.
        for library in [CodecLibrary.avif, .heif, .jxl] { _ = library.unavailableReason }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard let length = DecodeWorkerWire.descriptionLength(input.prefix(4)), input.count >= 4 + length,
              let request = try? JSONDecoder().decode(DecodeWorkerRequest.self, from: input.dropFirst(4).prefix(length)),
              request.version == DecodeWorkerWire.version
        else { return 1 }
        if let order = request.encode { return encode(order, as: request.format, pixels: input.dropFirst(4 + length)) }
        let data = Data(input.dropFirst(4 + length))
        if let limit = request.memoryLimit { limitMemory(to: limit) }
        do {
            guard let decoder = ImageCoderRegistry.default.decoders.first(where: { $0.canDecode(request.format) }) else {
                throw ImageDecodingError.unsupportedFormat(request.format)
            }
            let image = try decoder.decode(data, options: request.options)
            let arrays = image.frames.isEmpty ? [image.pixels] : image.frames.map(\.pixels)
            guard send(try DecodeWorkerWire.framed(DecodeWorkerReply(image))) else { return 1 }
            for pixels in arrays {
                guard pixels.withUnsafeBytes({ send($0) }) else { return 1 }
            }
            return 0
        } catch {
            let failure = error as? ImageDecodingError ?? .corrupt(format: request.format, reason: "\(error)")
            guard let reply = try? DecodeWorkerWire.framed(DecodeWorkerReply(error: failure)) else { return 1 }
            return send(reply) ? 0 : 1
        }
    }

    /// Serves an encode: the image from its description and the pixel arrays in `pixels`, written
    /// as `format` by the built-in encoder.
    private static func encode(_ order: EncodeOrder, as format: ImageFormat, pixels: Data) -> Int32 {
        var reply: EncodeWorkerReply
        var file = Data()
        do throws(ImageEncodingError) {
            let limits = ImageDecodingOptions(maxPixelCount: .max)
            guard let counts = try? order.image.checked(against: limits), counts.reduce(0, +) == pixels.count else {
                throw .encodingFailed(format: format, reason: "the encode request's pixels do not match its description")
            }
            var arrays: [[UInt8]] = []
            var start = pixels.startIndex
            for count in counts {
                arrays.append([UInt8](pixels[start..<start + count]))
                start += count
            }
            guard let encoder = ImageCoderRegistry.default.encoders.first(where: { $0.canEncode(format) }) else {
                throw .unsupportedFormat(format)
            }
            file = try encoder.encode(order.image.image(pixels: arrays), as: format, quality: order.quality)
            reply = EncodeWorkerReply(byteCount: file.count)
        } catch {
            reply = EncodeWorkerReply(error: error)
        }
        guard let framed = try? DecodeWorkerWire.framed(reply), send(framed) else { return 1 }
        return send(file) ? 0 : 1
    }

    /// Caps this process's data (`RLIMIT_DATA`: heap, thread stacks, private writable mappings)
    /// at what it holds now plus `bytes`, so that the decoder's allocations past that fail.
    private static func limitMemory(to bytes: Int) {
        #if canImport(Glibc)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmData:") }),
              let kilobytes = Int(line.dropFirst("VmData:".count).trimmingCharacters(in: .whitespaces).dropLast(3).trimmingCharacters(in: .whitespaces))
        else { return }
        let (held, o1) = kilobytes.multipliedReportingOverflow(by: 1024)
        let (total, o2) = held.addingReportingOverflow(bytes)
        guard !o1, !o2 else { return }
        var limit = rlimit(rlim_cur: rlim_t(total), rlim_max: rlim_t(total))
        _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
        #endif
    }

    private static func send(_ data: Data) -> Bool {
        data.withUnsafeBytes { send($0) }
    }

    /// All of `bytes` to standard output; `false` when the reader went away.
    private static func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return true }
            let written = write(1, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
