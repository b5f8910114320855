import Foundation

/// `webimage fetch`'s exit status (decision, issue 30): 0 — every line succeeded, or was skipped,
/// a duplicate, opted out or disallowed by robots.txt, or the failed lines were at most
/// `--max-failure-rate` of the lines; 3 — the run went through the whole list but more lines failed
/// than that (wget's 8 and rsync's 23 are such "done, with errors" codes; img2dataset always exits
/// 0); 1 — an error stopped the run, or an image or shard could not be written (a full disk is
/// never a normal failure); 64 — a usage error; 130 — interrupted.
enum FetchExit {
    static let someLinesFailed: Int32 = 3

    /// `--max-failure-rate`: a share from 0 to 1 (`0.2`) or a percentage (`20%`); `nil` otherwise.
    static func rate(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let percent = trimmed.hasSuffix("%")
        guard let number = Double(percent ? String(trimmed.dropLast()) : trimmed), number.isFinite else { return nil }
        let share = percent ? number / 100 : number
        return (0...1).contains(share) ? share : nil
    }

    /// The share of the run's lines that failed: failed lines over every line accounted for,
    /// duplicates and cancelled lines left out (0 when there were none).
    static func failureShare(of summary: FetchSummary) -> Double {
        let lines = summary.requested - summary.duplicates - summary.cancelled
        return lines > 0 ? Double(summary.failed) / Double(lines) : 0
    }

    /// The status a finished (or interrupted) run exits with.
    static func status(of summary: FetchSummary, maxFailureRate: Double) -> Int32 {
        if summary.interrupted { return 130 }
        if summary.unwritten > 0 { return 1 }
        return failureShare(of: summary) > maxFailureRate ? someLinesFailed : 0
    }
}
