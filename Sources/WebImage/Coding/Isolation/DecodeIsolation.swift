import Foundation

/// Decoding in a separate process that a cancel kills: for the formats whose C libraries have
/// no way to stop a decode once it runs (libheif 1.15, libavif 0.11, and libjxl 0.7's one-group
/// images), where a deadline that passes mid-decode would otherwise leave a core busy for
/// seconds. The worker is killed within 10 ms of the cancel; a C
/// library that crashes or aborts on a file ends only the worker (a typed `corrupt` error).
///
/// Decodes of fewer than ``minimumPixelCount`` pixels stay in the process: they end sooner than
/// starting a worker takes. Measured here (`info --decode`, release, one core): HEIF about 32 ms
/// per megapixel, JPEG XL 27, AVIF 8; a worker costs about 20 ms to start plus the copy of its
/// pixels. So the default (2 megapixels) keeps every in-process decode of these formats under
/// about 70 ms (docs/ARCHITECTURE.md, "Deadlines stop the work").
///
/// ```swift
/// let isolation = DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"]))
/// let coders = ImageCoderRegistry.default.isolatingDecodes(isolation)
/// ```
public struct DecodeIsolation: Sendable, Hashable {
    /// The program started for each isolated decode, and its arguments: it must call
    /// ``DecodeWorker/run()`` and exit with its status.
    public struct Worker: Sendable, Hashable {
        public var executable: String
        public var arguments: [String]

        public init(executable: String, arguments: [String]) {
            self.executable = executable
            self.arguments = arguments
        }

        /// The running program itself (`/proc/self/exe`: the same build even after its file was
        /// replaced by an upgrade), started with `arguments`.
        public static func currentExecutable(arguments: [String]) -> Worker {
            Worker(executable: "/proc/self/exe", arguments: arguments)
        }
    }

    public var worker: Worker
    /// Formats decoded in the worker. Default: AVIF, HEIC/HEIF and JPEG XL.
    public var formats: Set<ImageFormat>
    /// Images with fewer pixels (over the frames decoded) are decoded in the process. Default 2
    /// megapixels. HEIC/HEIF, and AVIF grids and overlays, go to the worker at any size (their header can understate the frames or tiles).
    public var minimumPixelCount: Int
    /// Keep one worker started ahead, its codec libraries loaded, waiting for the next decode:
    /// a decode then skips the worker's start (about 20 ms, and as much for loading the codecs).
    /// Default `true`; the waiting worker uses memory (about 40 MB resident, most of it shared
    /// libraries) and no CPU.
    public var keepsSpareWorker: Bool
    /// The memory one decode may take in its worker (``WorkerMemory``); `nil`: no limit.
    public var workerMemory: WorkerMemory?
    /// Formats encoded in the worker, whose encoders cannot be stopped inside a frame either.
    /// Default: AVIF and HEIC/HEIF (libaom and x265 take about a second a megapixel here), and
    /// lossless WebP (a lossy WebP encode stops at a cancel in the process).
    public var encodedFormats: Set<ImageFormat>
    /// Encodes of fewer pixels (over the frames) stay in the process. Default 100,000: an AVIF
    /// of that size is written in well under 100 ms.
    public var minimumEncodePixelCount: Int

    public init(
        worker: Worker, formats: Set<ImageFormat> = [.avif, .heic, .heif, .jpegXL], minimumPixelCount: Int = 2_000_000,
        keepsSpareWorker: Bool = true, workerMemory: WorkerMemory? = WorkerMemory(),
        encodedFormats: Set<ImageFormat> = [.avif, .heic, .heif, .webp], minimumEncodePixelCount: Int = 100_000
    ) {
        self.encodedFormats = encodedFormats
        self.minimumEncodePixelCount = minimumEncodePixelCount
        self.worker = worker
        self.formats = formats
        self.minimumPixelCount = minimumPixelCount
        self.keepsSpareWorker = keepsSpareWorker
        self.workerMemory = workerMemory
    }
}

extension ImageCoderRegistry {
    /// This registry with the built-in decoders of `isolation`'s formats decoding in its worker
    /// process, and its built-in encoders of ``DecodeIsolation/encodedFormats`` (AVIF, HEIF, lossless WebP)
    /// encoding there. Coders you inserted yourself are left as they are: the worker runs the
    /// built-in ones.
    ///
    /// ```swift
    /// let coders = ImageCoderRegistry.default.isolatingDecodes(
    ///     DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"])))
    /// ```
    public func isolatingDecodes(_ isolation: DecodeIsolation) -> ImageCoderRegistry {
        let builtIn = Self.default.decoders
        let wrapped = decoders.map { decoder -> any ImageDecoding in
            guard let format = isolation.formats.first(where: decoder.canDecode),
                  let original = builtIn.first(where: { $0.canDecode(format) }),
                  ObjectIdentifier(type(of: original)) == ObjectIdentifier(type(of: decoder))
            else { return decoder }
            return IsolatedDecoder(decoder, isolation: isolation)
        }
        let builtInEncoders = Self.default.encoders
        let encoders = encoders.map { encoder -> any ImageEncoding in
            guard let format = isolation.encodedFormats.first(where: encoder.canEncode),
                  let original = builtInEncoders.first(where: { $0.canEncode(format) }),
                  ObjectIdentifier(type(of: original)) == ObjectIdentifier(type(of: encoder))
            else { return encoder }
            return IsolatedEncoder(encoder: encoder, isolation: isolation)
        }
        return ImageCoderRegistry(decoders: wrapped, encoders: encoders)
    }

    /// Whether writing `pixelCount` pixels (over the frames) as `format` at `quality` runs in a
    /// worker process, which holds its own copy of the pixels while it encodes: a server counts
    /// them once more in its memory budget.
    ///
    /// ```swift
    /// let extra = coders.isolatesEncode(pixelCount: 4_000_000, as: .avif, quality: 0.6) ? 16_000_000 : 0
    /// ```
    public func isolatesEncode(pixelCount: Int, as format: ImageFormat, quality: Double) -> Bool {
        guard let isolated = encoders.first(where: { $0.canEncode(format) }) as? IsolatedEncoder else { return false }
        return isolated.isolates(pixelCount: pixelCount, as: format, quality: quality)
    }

    /// Whether decoding an image of `header` with `options` runs in a worker process, which then
    /// holds its own copy of the decoded pixels until they reach this process: a memory budget
    /// counts them twice (`MemoryBudget.bytes(toDecode:options:coders:)`).
    ///
    /// ```swift
    /// if coders.isolatesDecode(of: header, options: options) { log("decoded in a worker") }
    /// ```
    public func isolatesDecode(of header: ImageHeader, options: ImageDecodingOptions) -> Bool {
        guard let isolated = decoders.first(where: { $0.canDecode(header.format) }) as? IsolatedDecoder else { return false }
        return isolated.isolates(header, options: options)
    }

    /// Starts now the waiting worker of each isolation that keeps one
    /// (``DecodeIsolation/keepsSpareWorker``), so that the first isolated decode or encode does
    /// not wait for a worker to start and load its codec libraries either. A server calls it as it
    /// starts; otherwise the first spare starts after the first isolated decode.
    ///
    /// ```swift
    /// let coders = ImageCoderRegistry.default.isolatingDecodes(
    ///     DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"])))
    /// coders.startSpareWorkers()
    /// ```
    public func startSpareWorkers() {
        let decoding = decoders.compactMap { ($0 as? IsolatedDecoder)?.isolation }
        let encoding = encoders.compactMap { ($0 as? IsolatedEncoder)?.isolation }
        for isolation in Set(decoding + encoding) where isolation.keepsSpareWorker {
            DecodeWorkerSpares.replenish(isolation.worker, format: isolation.formats.first ?? .avif)
        }
    }
}

/// A built-in decoder whose large decodes run in a ``DecodeIsolation`` worker.
struct IsolatedDecoder: ImageDecoding {
    let decoder: any ImageDecoding
    let isolation: DecodeIsolation

    init(_ decoder: any ImageDecoding, isolation: DecodeIsolation) {
        self.decoder = decoder
        self.isolation = isolation
    }

    func canDecode(_ format: ImageFormat) -> Bool { decoder.canDecode(format) }

    func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader { try decoder.readHeader(data) }

    func animatedDecoder(for data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> (any AnimatedImageDecoding)? {
        try decoder.animatedDecoder(for: data, options: options)
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        // The header is read here (cheap, and fuzzed) so that the limits refuse a file before any
        // worker starts.
        let header = try decoder.readHeader(data)
        try options.checkPixelLimit(header)
        // An AVIF grid or overlay goes to the worker at any size: libavif gives each tile a dav1d
        // decoder bounded by the whole grid's size, whatever the tile declares (red team, stop 52:
        // a 23 KB file of 484 tiles declared 64 × 64 but coded 1400 × 1400 took 3.3 GB in `serve`).
        let derived = header.format == .avif && data.withUnsafeBytes { ISOItemLimit.hasDerivedImages($0) }
        guard derived || isolates(header, options: options) else { return try decoder.decode(data, options: options) }
        return try DecodeWorkerCall(
            worker: isolation.worker, format: header.format, options: options, keepsSpare: isolation.keepsSpareWorker,
            memoryLimit: isolation.workerMemory?.limit(forPixels: pixels(header, options: options))
        ).decode(data)
    }

    /// The pixels a decode of `header` makes, over its frames (`Int.max` when that overflows).
    private func pixels(_ header: ImageHeader, options: ImageDecodingOptions) -> Int {
        let (area, o1) = max(header.pixelWidth, 0).multipliedReportingOverflow(by: max(header.pixelHeight, 0))
        let (pixels, o2) = area.multipliedReportingOverflow(by: max(options.framesToDecode(of: header.frameCount), 1))
        return o1 || o2 ? .max : pixels
    }

    /// Whether a decode of `header` goes to the worker: an isolated format, and at least the
    /// minimum pixels over the frames decoded — or HEIC/HEIF at any size: its header (`ispe`) can
    /// claim less than the HEVC frames inside, which libde265 decodes at their own size and
    /// nothing bounds in the process (red team, stop 49: a 98 KB file saying 1000 × 750 took
    /// 1 GB in the server). AVIF bounds its frames by the header through dav1d, except in a grid
    /// or an overlay, where each tile may take the whole grid's size: ``decode(_:options:)``
    /// sends those to the worker at any size too (the file is needed to tell them).
    func isolates(_ header: ImageHeader, options: ImageDecodingOptions) -> Bool {
        guard isolation.formats.contains(header.format) else { return false }
        return header.format == .heic || header.format == .heif || pixels(header, options: options) >= isolation.minimumPixelCount
    }
}
