import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which process holds a reservation in the disk cache's index, and whether it has ended, so that
/// the space a killed process had reserved is given back (see ``CacheIndex/reserve(policy:limits:usage:wanted:granted:)``).
///
/// The identity is `<boot id> <pid namespace> <pid> <start time>` (Linux's `/proc`): the boot
/// and the namespace say whether this process can see the other one at all, the start time tells
/// a reused pid from the process that had it. Processes sharing a cache folder run on one host
/// (SQLite's WAL needs shared memory), so another boot id is a process of an earlier boot: ended.
/// In another pid namespace (another container on the same volume) or without `/proc`, whether it
/// lives is unknown and the reservation's age decides.
enum ProcessIdentity {
    enum Liveness: Equatable { case alive, ended, unknown }

    /// This process's identity (fields left empty when `/proc` cannot be read).
    static let current: String = {
        let pid = getpid()
        return [bootID, namespace, "\(pid)", startTime(of: pid).map { "\($0)" } ?? ""].joined(separator: " ")
    }()

    private static let bootID = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: " ", with: "") ?? ""

    private static let namespace: String = {
        var buffer = [CChar](repeating: 0, count: 128)
        let count = readlink("/proc/self/ns/pid", &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.replacingOccurrences(of: " ", with: "")
    }()

    /// Whether the process `identity` names still runs. Text that does not parse (the index is
    /// data like any other) is `unknown`, never a crash.
    static func liveness(of identity: String) -> Liveness {
        let parts = identity.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 4, !bootID.isEmpty, !namespace.isEmpty else { return .unknown }
        if parts[0] != bootID { return parts[0].isEmpty ? .unknown : .ended }
        guard parts[1] == namespace, let pid = Int32(parts[2]), pid > 0, let start = UInt64(parts[3]) else { return .unknown }
        guard access("/proc/\(pid)", F_OK) == 0 else { return errno == ENOENT ? .ended : .unknown }
        guard let fields = statFields(of: pid) else { return .unknown }
        // A zombie (ended, not yet waited for) has ended too; another start time is a reused pid.
        return fields.first == "Z" || fields.count < 20 || UInt64(fields[19]) != start ? .ended : .alive
    }

    /// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and
    /// parentheses): the state first, the start time (field 22) at index 19.
    private static func statFields(of pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    private static func startTime(of pid: Int32) -> UInt64? {
        guard let fields = statFields(of: pid), fields.count >= 20 else { return nil }
        return UInt64(fields[19])
    }
}
