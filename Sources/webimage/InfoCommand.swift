import ArgumentParser
import Foundation
import WebImage

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show an image's format, size, frame count, loop count and byte size.")

    @Argument(help: "An image URL or a file path.")
    var source: String

    @Flag(name: .long, help: "Print one JSON object with keys format, width, height, frames, loop (0 = forever), bytes.")
    var json = false

    struct Info: Codable {
        var format: String
        var width: Int
        var height: Int
        var frames: Int
        /// How often an animation plays (0 = forever); 1 for still images.
        var loop: Int
        var bytes: Int
    }

    func run() async throws {
        do {
            let data = try await load()
            // The first frame proves the data decodes; the frame count comes from the header.
            let image = try ImageCoderRegistry.default.decode(data, options: .init(firstFrameOnly: true))
            let info = Info(
                format: image.format.rawValue, width: image.pixelWidth, height: image.pixelHeight,
                frames: image.frameCount, loop: image.frameCount > 1 ? image.loopCount : 1, bytes: data.count)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(info), as: UTF8.self))
            } else {
                print("\(source): \(info.format) \(info.width)×\(info.height), \(info.frames) frame\(info.frames == 1 ? "" : "s")\(Self.loopText(info)), \(info.bytes) bytes")
            }
        } catch {
            FileHandle.standardError.write(Data("webimage info: \(source): \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// ", loops forever" or ", loop count 3" for animations; nothing for still images.
    private static func loopText(_ info: Info) -> String {
        guard info.frames > 1 else { return "" }
        return info.loop == 0 ? ", loops forever" : ", loop count \(info.loop)"
    }

    private func load() async throws -> Data {
        if let url = URL(string: source), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            return try await ImageDownloader().download(url).data
        }
        let path = source.hasPrefix("file://") ? (URL(string: source)?.path ?? source) : source
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw CLIError("no such file") }
        guard !isDirectory.boolValue else { throw CLIError("is a directory, not an image file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read the file") }
        return data
    }
}
