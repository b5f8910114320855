extension Image {
    /// Why the pixel buffers cannot be what the image says it is, or `nil` when they can.
    ///
    /// `Image`'s initialisers take the buffers as given; what reads them checks first: every
    /// encoder (a short buffer would be read past its end by the C library) and every
    /// processor. Checked: positive sizes, `bytesPerRow` at least `4 × pixelWidth`, ``pixels``
    /// long enough for every row, and each animation frame `4 × pixelWidth × pixelHeight` bytes.
    ///
    /// ```swift
    /// if let problem = image.bufferProblem { print("cannot use this image: \(problem)") }
    /// ```
    public var bufferProblem: String? {
        guard pixelWidth > 0, pixelHeight > 0 else { return "the image is \(pixelWidth) × \(pixelHeight) pixels" }
        let (rowBytes, overflowRow) = pixelWidth.multipliedReportingOverflow(by: 4)
        guard !overflowRow, bytesPerRow >= rowBytes else {
            return "\(bytesPerRow) bytes per row cannot hold \(pixelWidth) pixels"
        }
        let (rows, overflowRows) = bytesPerRow.multipliedReportingOverflow(by: pixelHeight - 1)
        let (needed, overflowNeeded) = rows.addingReportingOverflow(rowBytes)
        guard !overflowRows, !overflowNeeded, pixels.count >= needed else {
            return "\(pixels.count) bytes of pixels cannot hold \(pixelWidth) × \(pixelHeight) pixels at \(bytesPerRow) bytes per row"
        }
        let frameBytes = rowBytes * pixelHeight
        if let index = frames.firstIndex(where: { $0.pixels.count < frameBytes }) {
            return "frame \(index) has \(frames[index].pixels.count) bytes, not \(frameBytes)"
        }
        return nil
    }

    /// Throws ``ImageEncodingError/encodingFailed(format:reason:)`` when ``bufferProblem`` finds one.
    func checkEncodable(as format: ImageFormat) throws(ImageEncodingError) {
        if let problem = bufferProblem { throw .encodingFailed(format: format, reason: problem) }
    }

    /// ``checkEncodable(as:)``, then sides of at most `maxSide` pixels (the format's, or what its
    /// C library takes as an `int`) and, when the library reads rows at ``bytesPerRow``, a row
    /// stride that fits `Int32`: checked before any `Int32(_:)` could trap on a caller's sizes.
    func checkEncodable(as format: ImageFormat, maxSide: Int, stridesAsInt32: Bool = false) throws(ImageEncodingError) {
        try checkEncodable(as: format)
        guard pixelWidth <= maxSide, pixelHeight <= maxSide else {
            throw .encodingFailed(format: format, reason: "\(format) sides are at most \(maxSide) pixels, not \(pixelWidth) × \(pixelHeight)")
        }
        guard !stridesAsInt32 || bytesPerRow <= Int(Int32.max) else {
            throw .encodingFailed(format: format, reason: "\(bytesPerRow) bytes per row is over what the encoder takes")
        }
    }
}

extension Image {
    /// The pixels with rows packed (`4 * pixelWidth` bytes each): the stored array when it
    /// already is. Call once the buffer is checked (``checkEncodable(as:)``, a processor's `checkInput`): that proves the buffer holds every row.
    var packedPixels: [UInt8] {
        let rowBytes = pixelWidth * 4
        guard bytesPerRow != rowBytes else { return pixels }
        var packed = [UInt8](repeating: 0, count: rowBytes * pixelHeight)
        for y in 0..<pixelHeight {
            packed[(y * rowBytes)..<((y + 1) * rowBytes)] = pixels[(y * bytesPerRow)..<(y * bytesPerRow + rowBytes)]
        }
        return packed
    }
}
