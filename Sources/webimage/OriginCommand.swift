import ArgumentParser
import Foundation
import WebImageOrigin

/// Serves the sample images and the test routes, for manual testing and measurements.
struct OriginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "origin",
        abstract: "Serve the generated sample images (and the misbehaving test routes) on 127.0.0.1 until interrupted.",
        discussion: """
            Prints the base URL on its first line. Routes: /images/NAME (query: delay, status, corrupt, \
            truncate, lie, chunk, stall), /big?size=N, /lookup/NAME, /redirect/N/NAME, /auth/images/NAME, \
            /flaky/NAME. Stops on SIGINT or SIGTERM, or after --seconds.
            """)

    @Option(name: .long, help: "Stop after this many seconds (default: run until interrupted).")
    var seconds: Double?

    @Option(name: .long, help: "Listen on this loopback address, 127.0.0.1 to 127.255.255.254 (default 127.0.0.1): many origins, many host names.")
    var address = "127.0.0.1"

    func run() async throws {
        let origin = try await ImageOrigin.start(files: try SampleImages.standardSet(), address: address)
        // Unbuffered, so a script reading the first line sees it at once.
        let banner = origin.baseURL.absoluteString + "\nimages: " + origin.imageNames.joined(separator: " ") + "\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        let stop = AsyncStream<Void>.makeStream()
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler { stop.continuation.finish() }
            source.resume()
            return source
        }
        if let seconds {
            Task {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                stop.continuation.finish()
            }
        }
        for await _ in stop.stream {}
        sources.forEach { $0.cancel() }
        await origin.stop()
    }
}
