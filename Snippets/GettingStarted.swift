// Loads an image through a pipeline with a disk cache: downloaded once, then found in memory,
// or on disk after a restart; then a round 96-pixel avatar of it, written as a PNG file.
//
//     swift run GettingStarted https://example.com/photo.jpg
import Foundation
import WebImage

// snippet.setup
var configuration = ImagePipeline.Configuration()
configuration.dataCache = try DiskCache(directory: DiskCache.defaultDirectory)
let pipeline = ImagePipeline(configuration: configuration)

// snippet.load
let address = CommandLine.arguments.dropFirst().first ?? "https://example.com/photo.jpg"
guard let url = URL(string: address) else { fatalError("not a URL: \(address)") }
let response = try await pipeline.image(for: url)
print("\(response.source): \(response.image.pixelWidth) × \(response.image.pixelHeight) \(response.image.format)")

// snippet.avatar
let avatar = ImageRequest(url: url)
    .thumbnail(maxPixelSize: 256)
    .processed(by: [.resize(width: 96, height: 96, mode: .fill), .circle()])
let round = try await pipeline.image(for: avatar).image

// snippet.write
let (file, format) = try ImageExport(format: .png).export(round)
try file.write(to: URL(fileURLWithPath: "avatar.\(format.fileExtension)"))
print("wrote avatar.\(format.fileExtension)")
// snippet.end
