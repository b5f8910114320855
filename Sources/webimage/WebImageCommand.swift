import ArgumentParser
import Foundation
import WebImage

@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Download, decode and cache images from the web.",
        subcommands: [FetchCommand.self, InfoCommand.self, DemoCommand.self, CacheCommand.self, OriginCommand.self, PrefetchCommand.self, ReportCommand.self]
            + [ServeCommand.self, SignCommand.self]
            + [ShowCommand.self, DecodeWorkerCommand.self]
    )

    /// A decode worker starts before the argument parser: its first look at the subcommands'
    /// types costs a large binary's protocol-conformance scan (about 6 ms of a worker's ~27 ms
    /// start, measured with `perf`), which every isolated decode would pay.
    static func main() async {
        if CommandLine.arguments.dropFirst().first == DecodeWorkerCommand.name, CommandLine.arguments.count == 2 {
            Foundation.exit(DecodeWorker.run())
        }
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
