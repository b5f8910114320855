import Foundation

/// Runs the built `webimage` executable as a real process.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum WebImageCommand {
    /// `webimage` sits next to the test bundle in the build directory.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("webimage").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("webimage")
    }

    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) async throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        // Waits without blocking a thread of the cooperative pool (the origin runs on it).
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in
                let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                continuation.resume(returning: CommandResult(status: finished.terminationStatus, stdout: stdout, stderr: stderr))
            }
            do {
                try process.run()
                if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
                try? input.fileHandleForWriting.close()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
