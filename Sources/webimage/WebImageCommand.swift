import ArgumentParser

@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Download, decode and cache images from the web.",
        subcommands: [FetchCommand.self, InfoCommand.self, DemoCommand.self, CacheCommand.self, OriginCommand.self, PrefetchCommand.self, ReportCommand.self]
            + [ServeCommand.self, SignCommand.self]
            + [ShowCommand.self, DecodeWorkerCommand.self]
    )
}
