import Testing
@testable import WebImageOrigin

/// The test origin's request log keeps the last requests only, so a long `webimage origin` run
/// stays small, while its counts still cover every request.
@Suite("Origin: the request log is bounded")
struct OriginRequestLogTests {
    @Test func oldEntriesAreDroppedAndCountsStayWhole() {
        let log = RequestLog()
        let total = RequestLog.capacity + 10
        var serials: [Int] = []
        for n in 0..<total {
            serials.append(log.arrive(path: n % 2 == 0 ? "/a" : "/b", query: nil, headers: [:]))
        }
        let entries = log.entries
        #expect(entries.count <= RequestLog.capacity && entries.count >= RequestLog.capacity / 2)
        #expect(log.totalCount == total)
        #expect(log.count("/a") + log.count("/b") == total)
        // The entries kept are the latest ones, in order.
        #expect(entries.last?.index == total && entries.first.map { total - $0.index + 1 } == entries.count)
        // Answering a dropped request changes nothing and does not trap; the latest is recorded.
        log.answered(serials[0], status: 500)
        log.answered(serials[total - 1], status: 204)
        #expect(log.entries.last?.status == 204)
        log.reset()
        #expect(log.totalCount == 0 && log.entries.isEmpty && log.count("/a") == 0)
        let next = log.arrive(path: "/c", query: nil, headers: [:])
        log.answered(next, status: 200)
        #expect(log.entries.map(\.status) == [200] && log.entries.first?.index == 1)
    }
}
