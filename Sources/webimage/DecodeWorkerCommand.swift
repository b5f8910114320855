import ArgumentParser
import Foundation
import WebImage

/// `webimage decode-worker`: not for people. `serve` starts its own executable with it for each
/// isolated decode (``DecodeIsolation``); it reads one request on standard input and writes the
/// image on standard output (``DecodeWorker/run()``).
struct DecodeWorkerCommand: ParsableCommand {
    static let name = "decode-worker"
    static let configuration = CommandConfiguration(
        commandName: name, abstract: "Decode one image for serve (internal).", shouldDisplay: false)

    func run() throws {
        Foundation.exit(DecodeWorker.run())
    }
}
