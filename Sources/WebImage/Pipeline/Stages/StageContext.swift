/// What a stage's work sees of its job: the priority to pass down, and events to send up.
protocol StageContext: Sendable {
    @discardableResult
    func onPriorityChange(_ observer: @escaping @Sendable (RequestPriority) -> Void) -> RequestPriority
    func send(_ event: StageEvent)
}

extension SharedWork.Context: StageContext where Event == StageEvent {}

typealias DataContext = SharedWork<String, OriginalData, StageEvent>.Context
typealias DecodeContext = SharedWork<String, DecodedImage, StageEvent>.Context
typealias ImageContext = SharedWork<String, ImageResponse, StageEvent>.Context

/// A decoded original, before processing.
struct DecodedImage: Sendable {
    var image: Image
    var original: OriginalData
    /// The memory budget's reservation for the decoded pixels: held as long as this value is
    /// (by the decode job's subscribers while they process it), released when the last copy goes.
    var reservation: MemoryBudget.Reservation? = nil
}
