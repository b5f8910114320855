public import Foundation
public import WebImage

/// Everything `webimage serve` can be told: security, limits, caches and response headers.
///
/// Every field has a documented default (imgproxy's where it has one) and a `WEBIMAGE_*`
/// environment variable in the command (see docs/DEPLOY.md).
///
/// ```swift
/// var configuration = ImageServerConfiguration()
/// configuration.signingKeys = [Data("secret".utf8)]
/// configuration.allowedSources = ["https://images.example.com/"]
/// let server = try ImageServer(configuration: configuration)
/// server.addRoutes(to: router)
/// ```
public struct ImageServerConfiguration: Sendable {
    /// HMAC-SHA256 keys; any of them verifies a signature (key rotation). Empty: signatures off.
    public var signingKeys: [Data] = []
    /// Source URL prefixes that may be fetched; empty allows any source.
    public var allowedSources: [String] = []
    /// Fetch from loopback, private, link-local, CGNAT, unique-local, multicast and unspecified
    /// addresses too. Off by default (SSRF protection).
    public var allowPrivateNetworks = false
    /// Turns host names into addresses before they are checked and connected to. Tests map
    /// their own names here; the default asks the system resolver.
    public var resolver: any HostResolving = SystemHostResolver()
    /// Sends each request to the address that passed the check; `nil` uses a
    /// ``PinnedHTTPConnector``. Tests route every connection to loopback here.
    public var connector: (any PinnedConnecting)? = nil
    /// PEM certificates trusted for https sources besides the system's roots (a private CA of
    /// internal origins), used by the default connector. Certificates are always verified.
    public var sourceTrustedCertificates: [Data] = []

    /// The directory `local:///PATH` sources are read under (imgproxy's
    /// `IMGPROXY_LOCAL_FILESYSTEM_ROOT`); `nil` (the default): `local://` is refused (403).
    /// See ``LocalSourceLoader``.
    public var localRoot: String? = nil
    /// Where and as whom `s3://BUCKET/KEY` sources are fetched (imgproxy's `IMGPROXY_USE_S3`);
    /// `nil` (the default): `s3://` is refused (403). See ``S3SourceLoader``.
    public var s3: S3Configuration? = nil

    /// Largest source body, in bytes (50 MB).
    public var maxSourceBytes = 50 * 1024 * 1024
    /// Largest source, in pixels summed over all frames (50 MP).
    public var maxSourcePixels = 50_000_000
    /// Time allowed for fetching a source (5 s).
    public var fetchTimeout: Duration = .seconds(5)
    /// Time allowed for decoding, processing and encoding (10 s).
    public var processingTimeout: Duration = .seconds(10)
    /// Largest side of a result (and of `w`, `h`), in pixels (8192).
    public var maxOutputSide = 8192
    /// The work one request may ask for: the result's pixels × its frames, and every
    /// intermediate of one frame, at most this many (50 MP). Priced from the source's header
    /// before any pixel work; over it: `422 output_too_large`. Enlargement happens only inside it.
    public var maxOutputPixels = 50_000_000
    /// Frames of an animated source kept (256); later frames are dropped, as imgproxy's
    /// `MAX_ANIMATION_FRAMES` does, and are neither decoded nor counted.
    public var maxAnimationFrames = 256
    /// Steps `process=` may have (16); more: `400 bad_parameter`.
    public var maxProcessSteps = 16

    /// Requests fetched and rendered at once (twice the number of cores, as imgproxy's workers:
    /// a slot is held from the source fetch to the end of the render).
    public var maxConcurrentRenders = ProcessInfo.processInfo.activeProcessorCount * 2
    /// Threads that decode, process and encode (one per core): renders run on these, never on
    /// Swift's cooperative pool, so `/health`, `/metrics`, cache hits and the deadlines' timers
    /// answer however heavy the renders are. Renders beyond it wait for a thread.
    public var renderThreads = ProcessInfo.processInfo.activeProcessorCount
    /// Added to the process's nice value on the render threads (0…19; default 5): when renders
    /// fill every core, the server's event loops still get one at once, so `/health` and cache
    /// hits answer within milliseconds; on an idle machine renders use every core as before.
    public var renderNiceness: Int32 = 5
    /// The memory renders may hold at once, in bytes: `MemoryBudget/defaultLimit` (half the
    /// cgroup limit, or half of physical memory), at most 1 GiB, so that a server left at its
    /// defaults stays near 1 GB plus its fixed overhead whatever it is asked. Each render
    /// reserves its price (decoded source, intermediates, result frames, encoder buffers) before
    /// decoding and waits for room at most the processing timeout: then `503 over_budget`; a
    /// render priced over the whole budget (a 49 MP AVIF: about 2 GB) is `422 output_too_large`.
    public var memoryBudgetBytes = min(MemoryBudget.defaultLimit, 1 << 30)
    /// Requests that may wait for a render slot; more get `429` with `Retry-After` (64).
    public var maxQueuedRenders = 64
    /// Renders one client may run or wait for at once; `nil` (the default) sets no per-client
    /// limit. A client is the peer's address; when the peer is a proxy on a loopback or private
    /// address, the last address of `X-Forwarded-For` (the one that proxy appended). Needs a
    /// router of ``ImageServerRequestContext`` (or another `RemoteAddressRequestContext`).
    public var maxRendersPerClient: Int? = nil

    /// `Cache-Control: public, max-age=` of images (one year, as imgproxy: results of one URL
    /// only change when the source does, and the ETag follows the source).
    public var cacheMaxAge: Int = 31_536_000
    /// `max-age` of error responses (10 s); `429` and `503` are never cacheable.
    public var errorMaxAge: Int = 10

    /// Bytes of rendered images kept in memory (64 MB); 0 turns the memory result cache off.
    public var resultMemoryBytes = 64 * 1024 * 1024
    /// Directory of the disk result cache; `nil` (the default) keeps no results on disk.
    public var resultCacheDirectory: URL? = nil
    /// Directory of the source cache (originals, HTTP-aware); `nil` keeps sources in memory only.
    public var sourceCacheDirectory: URL? = nil
    /// Bytes of source images kept in memory (64 MB); 0 turns it off.
    public var sourceMemoryBytes = 64 * 1024 * 1024
    /// Quality of lossy output when `q` is not given (80).
    public var defaultQuality = 80
    /// What a render does with the source's colour profile: `ColorHandling/convertToSRGB` (the
    /// default, as imgproxy: sRGB pixels, no profile in the result), `ColorHandling/keep` (pixels
    /// as stored, the profile embedded in JPEG, PNG, WebP and AVIF results) or
    /// `ColorHandling/ignore`. Metadata (EXIF, XMP, GPS) never reaches a result; orientation is
    /// applied to the pixels.
    public var colorHandling: ColorHandling = .convertToSRGB
    /// The coders every render and `/info` decodes and encodes with. `webimage serve` gives its
    /// own with AVIF, HEIF and JPEG XL decodes in a worker process that a passed deadline kills
    /// (`ImageCoderRegistry.isolatingDecodes(_:)`): their C libraries cannot be stopped
    /// otherwise. Default: `ImageCoderRegistry.default`, everything in this process.
    ///
    /// ```swift
    /// configuration.coders = ImageCoderRegistry.default.isolatingDecodes(
    ///     DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"])))
    /// ```
    public var coders: ImageCoderRegistry = .default

    /// Named parameter sets, `NAME=PARAMETER:VALUE/…` (``ImagePresets``): `/img?preset=NAME`
    /// uses one; a preset named `default` applies to every request. None by default.
    public var presets: [String] = []
    /// Requests may give only `url`, `preset` and `s` (imgproxy's `IMGPROXY_ONLY_PRESETS`): what
    /// is rendered is only ever what the operator defined. Off by default; needs a preset.
    public var onlyPresets = false
    /// The image `wm=` blends over results (``ServerWatermark``); `nil` (the default): `wm` without
    /// a name is refused.
    public var watermark: ServerWatermark? = nil
    /// Watermarks a request picks by name, `wm=NAME:…` (names as
    /// ``ImageParameters/WatermarkOptions/isValidName(_:)`` allows). None by default; a request
    /// naming one that is not here is refused with a 400.
    ///
    /// ```swift
    /// var configuration = ImageServerConfiguration()
    /// configuration.namedWatermarks["logo"] = try ServerWatermark(contentsOf: "/etc/webimage/logo.png")
    /// // /img?url=…&wm=logo:0.5:soea:10:10
    /// ```
    public var namedWatermarks: [String: ServerWatermark] = [:]

    public init() {}
}

extension ImageServerConfiguration {
    /// The watermark image `options` asks for: the named one, or the default; nil without `wm`.
    /// A 400 when the server has no such watermark.
    func watermark(for options: ImageParameters.WatermarkOptions?) throws(ImageServerError) -> ServerWatermark? {
        guard let options else { return nil }
        if let name = options.name {
            guard let mark = namedWatermarks[name] else { throw .badParameter("'wm': this server has no watermark named '\(name)'") }
            return mark
        }
        guard let watermark else { throw .badParameter("'wm': this server has no watermark image") }
        return watermark
    }
}

extension ImageServerConfiguration {
    /// The settings that change a result's pixels or bytes — ``defaultQuality``,
    /// ``maxOutputSide``, ``maxAnimationFrames`` — as one part of the result key and ETag, or
    /// `nil` at their defaults (keys as before). Limits that only refuse (pixels, steps) are not
    /// in it: a refusal is never stored.
    var renderingKey: String? {
        let defaults = ImageServerConfiguration()
        guard defaultQuality != defaults.defaultQuality || maxOutputSide != defaults.maxOutputSide
            || maxAnimationFrames != defaults.maxAnimationFrames
        else { return nil }
        return "q\(defaultQuality),side\(maxOutputSide),frames\(maxAnimationFrames)"
    }
}
