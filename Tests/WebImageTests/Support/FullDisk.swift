import Foundation

/// Runs a command whose output folder is a tiny tmpfs (64 KB), mounted in a mount namespace of
/// the child's own (`unshare`, root or an unprivileged user namespace): a full disk without
/// filling the machine's. The folder is listed inside the namespace (the tmpfs ends with it), on
/// the last line of the output: `files: NAME NAME … ` (the `.webimage` manifest left out).
///
/// ```swift
/// let (status, stdout) = try await FullDisk.run([webimage, "fetch", …, "--output", out.path], output: out)
/// ```
enum FullDisk {
    static func run(_ command: [String], output: URL, size: String = "64k") async throws -> (Int32, String) {
        let script = """
            out=$1; shift
            mount -t tmpfs -o size=\(size) tmpfs "$out" || exit 97
            "$@"; status=$?
            echo "files: $(ls -A "$out" | grep -v '^[.]webimage' | tr '\\n' ' ')"
            exit $status
            """
        let child = try ChildProcess(["-rm", "bash", "-c", script, "sh", output.path] + command, executable: "/usr/bin/unshare")
        return await child.exit()
    }
}
