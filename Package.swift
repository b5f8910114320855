// swift-tools-version:6.1
import PackageDescription

import class Foundation.ProcessInfo

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "WebImage",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .library(name: "WebImageOrigin", targets: ["WebImageOrigin"]),
        .library(name: "WebImageTerminal", targets: ["WebImageTerminal"]),
        .library(name: "WebImageURLSession", targets: ["WebImageURLSession"]),
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
        // The image server's routes in a Vapor 4 app; needs the `Vapor` trait (docs/architecture/server.md).
        .library(name: "WebImageVapor", targets: ["WebImageVapor"]),
        .executable(name: "webimage", targets: ["webimage"]),
    ],
    traits: [
        .trait(
            name: "Vapor",
            description: "WebImageVapor: the image server's routes in a Vapor 4 app. Off by default, so that a package that does not ask for it neither resolves nor builds Vapor."),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/vapor/vapor.git", exact: "4.122.3"),  // WebImageVapor, under the `Vapor` trait
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", exact: "1.6.0"),
        .package(url: "https://github.com/vapor/console-kit.git", exact: "4.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),  // the disk cache's index (SQLite, WAL)
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", exact: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),  // webimage serve's /metrics
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),  // fetch --report
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", exact: "1.5.0"),  // swift package generate-documentation
        .package(url: "https://github.com/yaslab/CSV.swift.git", exact: "2.5.2"),  // fetch --input-format csv/tsv (one record at a time)
    ],
    targets: [
        // Thin system-library wrappers over Debian's codec packages (see scripts/setup).
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CLibraries/CTurboJPEG"),
        .systemLibrary(name: "CSpng", path: "Sources/CLibraries/CSpng"),
        .systemLibrary(name: "CWebP", path: "Sources/CLibraries/CWebP", pkgConfig: "libwebpdemux"),
        .systemLibrary(name: "CGIF", path: "Sources/CLibraries/CGIF"),
        // AVIF, HEIF and JPEG XL: headers only; CCodecLoader opens the libraries on first use.
        .systemLibrary(name: "CAvif", path: "Sources/CLibraries/CAvif"),
        .systemLibrary(name: "CHeif", path: "Sources/CLibraries/CHeif"),
        .systemLibrary(name: "CTiff", path: "Sources/CLibraries/CTiff"),
        .systemLibrary(name: "CJxl", path: "Sources/CLibraries/CJxl"),
        // LittleCMS 2: ICC colour conversion (Debian's liblcms2, as Pillow and libvips use).
        .systemLibrary(name: "CLibcrypto", path: "Sources/CLibraries/CLibcrypto", pkgConfig: "libcrypto"),  // SHA-256 and HMAC (Internal/Digests)
        .systemLibrary(name: "CLcms2", path: "Sources/CLibraries/CLcms2", pkgConfig: "lcms2"),
        // zlib: PNG's compressed iCCP profile, inflated with a size limit.
        .systemLibrary(name: "CZlib", path: "Sources/CLibraries/CZlib", pkgConfig: "zlib"),
        // libpsl: the Public Suffix List, so a cookie for `co.uk` or `github.io` is refused (as curl does).
        .systemLibrary(name: "CPsl", path: "Sources/CLibraries/CPsl", pkgConfig: "libpsl"),
        // libavif, libheif and libjxl (and the ~30 AV1/HEVC/Highway objects behind them) opened
        // with dlopen on first use, not at process start: see docs/architecture/startup.md.
        .target(name: "CCodecLoader", path: "Sources/CLibraries/CCodecLoader", linkerSettings: [.linkedLibrary("dl")]),
        // CRC-32C with the CPU's crc32 instruction: the disk cache's checksum (see docs/architecture/caching.md).
        .target(name: "CCRC32C", path: "Sources/CLibraries/CCRC32C"),
        // The vectorised matrix-and-curve colour conversion to sRGB, in AVX-512 where the CPU has
        // it (see docs/architecture/colour.md).
        .target(name: "CColorKernel", path: "Sources/CLibraries/CColorKernel"),
        // libjpeg with a suspending source, for incremental JPEG decoding, and row by row from
        // memory for still decoding that a cancel can stop: its error exit is a longjmp, which
        // Swift cannot catch, so the calls live in C (see its headers).
        .target(name: "CJPEGIncremental", path: "Sources/CLibraries/CJPEGIncremental", linkerSettings: [.linkedLibrary("jpeg")]),
        // libpng's progressive (push) reader, for incremental PNG decoding: its errors are a
        // longjmp too, so the calls live in C (see its header). libspng cannot pause mid-stream.
        .target(name: "CPNGIncremental", path: "Sources/CLibraries/CPNGIncremental", linkerSettings: [.linkedLibrary("png")]),

        .target(
            name: "WebImage",
            dependencies: [
                "CTurboJPEG", "CSpng", "CWebP", "CGIF", "CAvif", "CHeif", "CCRC32C", "CJPEGIncremental",
                "CPNGIncremental", "CTiff", "CJxl", "CLcms2", "CZlib", "CCodecLoader", "CColorKernel", "CLibcrypto", "CPsl",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        // A real HTTP origin (Hummingbird) serving generated images: used by the tests,
        // by `webimage demo` and by the benchmarks.
        .target(
            name: "WebImageOrigin",
            dependencies: [
                "WebImage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The URLSession loader, apart: FoundationNetworking brings libcurl and some thirty
        // shared objects (TLS, Kerberos, LDAP) that every process linking it loads at start.
        .target(name: "WebImageURLSession", dependencies: ["WebImage"], swiftSettings: strict),
        // Pictures in the terminal (kitty, sixel, iTerm2, half-blocks) for `webimage show`; a
        // library so the tests can decode what the encoders write.
        .target(name: "WebImageTerminal", dependencies: ["WebImage"], swiftSettings: strict),
        // `webimage serve`: Hummingbird routes resizing images from other origins (issue 14).
        .target(
            name: "WebImageServer",
            dependencies: [
                "WebImage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),  // the guarded HTTP/1 channel
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),  // the decoder's header-limit error
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),  // the render's span
            ],
            swiftSettings: strict
        ),
        // The same routes mounted on Vapor's router (under the `Vapor` trait; empty without it).
        .target(
            name: "WebImageVapor",
            dependencies: ["WebImageServer", .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"]))],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage", "WebImageOrigin", "WebImageServer", "WebImageTerminal",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CSV", package: "CSV.swift"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WebImageTests",
            dependencies: [
                "WebImage", "WebImageOrigin", "WebImageServer", "WebImageTerminal", "WebImageURLSession",
                "WebImageVapor",  // its tests run a real Vapor app (under the `Vapor` trait, which scripts/test enables)
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                "CCRC32C",  // the checksum tests compare its ISA-L and builtin paths
                "CPNGIncremental",  // the incremental PNG tests check the canvas is never allocated over the limit
                "CTurboJPEG",  // the row-by-row JPEG decode is compared with TurboJPEG's one-call decode
                "CWebP",  // the WebP decode fed in pieces is compared with WebPDecode's one call
                "CJxl",  // libjxl's parallel-runner types: the cancellable runner is called alone
                "CColorKernel", "CLcms2",  // the vector colour kernel's encode and scalar fallback are checked alone
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),  // the disk cache tests damage the index
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                // The image server's tests run it in a real Hummingbird app.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)

// serve --otlp-endpoint: traces and metrics over OTLP/HTTP, with swift-otel's OTLPHTTP trait only
// (the gRPC exporter's packages are resolved but never built). Left out of the Thread Sanitizer
// build (scripts/tsan sets WEBIMAGE_TSAN): swift-otel 1.6.0 does not compile under
// -sanitize=thread with Swift 6.3.1 (a "sending 'logger' risks causing data races" error in its
// OTelBatchLogRecordProcessor), and that build's `serve` says OTLP is not in it.
if ProcessInfo.processInfo.environment["WEBIMAGE_TSAN"] == nil {
    package.dependencies.append(.package(url: "https://github.com/swift-otel/swift-otel.git", exact: "1.6.0", traits: ["OTLPHTTP"]))
    if let cli = package.targets.first(where: { $0.name == "webimage" }) {
        cli.dependencies.append(.product(name: "OTel", package: "swift-otel"))
        cli.swiftSettings = (cli.swiftSettings ?? []) + [.define("WEBIMAGE_OTLP")]
    }
}

// Benchmarks (ordo-one/benchmark) are added only when asked for, so that `swift test` does not
// build the benchmark tool: `WEBIMAGE_BENCHMARKS=1 swift package benchmark`.
if ProcessInfo.processInfo.environment["WEBIMAGE_BENCHMARKS"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]))
    package.targets += [
        // TurboJPEG called directly: the "plain decode" the wrapper is compared against. The other
        // plain decodes (PlainDecodeBenchmarks.swift) use the library targets above directly.
        .systemLibrary(name: "CTurboJPEGPlain", path: "Sources/CLibraries/CTurboJPEGPlain"),
        .executableTarget(
            name: "WebImageBenchmarks",
            dependencies: [
                "CTurboJPEGPlain", "CSpng", "CWebP", "CGIF", "CAvif", "CHeif", "WebImage", "WebImageOrigin", "WebImageURLSession",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/WebImageBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Peak-memory rise of one decode, in its own process (scripts/measure/measure-thumbnail-memory).
        .executableTarget(
            name: "WebImageMeasure",
            dependencies: ["WebImage", "WebImageOrigin", "WebImageURLSession", "CSpng"],  // CSpng: an interlaced PNG (chunks)
            path: "Tools/WebImageMeasure",
            swiftSettings: strict
        ),
    ]
}
