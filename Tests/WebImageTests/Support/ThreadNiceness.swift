import Foundation

/// Nice values of a process's threads, read from `/proc/PID/task/TID/stat` (field 19).
enum ThreadNiceness {
    /// Each live thread's name (`comm`) and nice value.
    static func of(process pid: pid_t) -> [(name: String, nice: Int)] {
        let tasks = "/proc/\(pid)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.compactMap { id in
            guard let name = try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "\(tasks)/\(id)/stat", encoding: .utf8),
                  let nice = Self.nice(stat: stat) else { return nil }
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), nice)
        }
    }

    /// The calling thread's nice value.
    static func ofCurrentThread() -> Int? {
        (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)).flatMap(nice(stat:))
    }

    /// Field 19 of a stat line; the fields after the name, which is in parentheses and may hold spaces.
    private static func nice(stat: String) -> Int? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field 19 is fields[16].
        return fields.count > 16 ? Int(fields[16]) : nil
    }
}
