import Foundation
import Testing
import WebImage
@testable import WebImageURLSession

/// The URLSession loader's body buffer between libcurl's thread and the reader.
@Suite("URLSession body channel")
struct BodyChannelTests {
    @Test func chunksSentWhileTheReaderIsBusyArriveAsOneReadInOrder() async throws {
        let channel = BodyChannel {}
        channel.expect(6)
        for byte in UInt8(1)...6 { channel.send(Data([byte])) }
        channel.finish()
        let body = ChannelBody(channel)
        var reads: [Data] = []
        for try await part in body { reads.append(part) }
        #expect(reads == [Data([1, 2, 3, 4, 5, 6])])
    }

    @Test func aFailureComesAfterWhatArrivedBeforeIt() async throws {
        let channel = BodyChannel {}
        channel.send(Data([1, 2]))
        channel.finish(ImageDownloadError.timedOut)
        var iterator = ChannelBody(channel).makeAsyncIterator()
        #expect(try await iterator.next() == Data([1, 2]))
        await #expect(throws: ImageDownloadError.timedOut) { _ = try await iterator.next() }
    }

    @Test func aWaitingReaderGetsEachChunkAsItComes() async throws {
        let channel = BodyChannel {}
        let reader = Task {
            var reads: [Data] = []
            for try await part in ChannelBody(channel) { reads.append(part) }
            return reads
        }
        for byte in UInt8(1)...3 {
            try await Task.sleep(for: .milliseconds(50))
            channel.send(Data([byte]))
        }
        channel.finish()
        // Each chunk came while the reader waited (50 ms apart), unless the machine stalled it.
        let reads = try await reader.value
        #expect(reads.reduce(Data(), +) == Data([1, 2, 3]))
        #expect(!reads.isEmpty && reads.count <= 3)
    }

    @Test func droppingOrCancellingTheReaderStopsTheTransferOnce() async throws {
        let stops = Recorder<Int>()
        let dropped = BodyChannel { stops.append(1) }
        do { _ = ChannelBody(dropped) }
        dropped.send(Data([1]))  // after the reader left: not kept
        #expect(stops.all == [1])

        let cancelled = BodyChannel { stops.append(2) }
        let reader = Task { for try await _ in ChannelBody(cancelled) {} }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        #expect(stops.all == [1, 2])
    }
}
