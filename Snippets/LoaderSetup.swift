// The loaders' documentation examples, compiled with the package (`swift build` builds
// snippets): an example that stops compiling breaks the build instead of misleading a reader.
import WebImage
import WebImageURLSession

// snippet.show
// HTTPDataLoader: AsyncHTTPClient, one per process, shared by the downloader and the pipeline.
let loader = HTTPDataLoader(maxRedirects: 5, allowsInvalidCertificates: false)
let downloader = ImageDownloader(loader: loader)
let pipeline = ImagePipeline(configuration: .init(downloader: downloader))

// URLSessionDataLoader: Foundation's URLSession (libcurl on Linux) instead.
let sessionPipeline = ImagePipeline(configuration: .init(downloader: ImageDownloader(loader: URLSessionDataLoader())))

// Sharing: only the same request shares a download; tracing headers may be ignored.
var configuration = ImageDownloaderConfiguration()
configuration.sharing = .byRequest(ignoringHeaders: ["X-Request-ID"])
let tracedDownloader = ImageDownloader(loader: loader, configuration: configuration)
// snippet.end

_ = (pipeline, sessionPipeline, tracedDownloader)
