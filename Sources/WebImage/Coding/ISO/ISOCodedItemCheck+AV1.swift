extension ISOCodedItemCheck {
    /// An AV1 item: `av1C`'s configuration OBUs (after its four bytes), then the data's OBUs;
    /// every sequence header counts.
    static func av1Coding(
        _ bytes: UnsafeRawBufferPointer, configuration: Range<Int>?, data: [Range<Int>], units: inout Int,
        format: ImageFormat, throughLibheif: Bool
    ) throws(ImageDecodingError) -> Coding {
        var coding = Coding()
        var parts: [ISOItemBytes] = [ISOItemBytes(bytes, data)]
        if let configuration, configuration.count > 4 {
            parts.insert(ISOItemBytes(bytes, [(configuration.lowerBound + 4)..<configuration.upperBound]), at: 0)
        }
        for part in parts {
            var offset = 0
            while let header = part[offset] {
                try Self.count(&units, format)
                var start = offset + 1 + (header & 4 != 0 ? 1 : 0)
                var length = part.count - start
                if header & 2 != 0 {
                    guard let size = leb128(part, at: &start) else { break }
                    length = size
                }
                guard start <= part.count, length >= 0, length <= part.count - start else { break }
                if Int(header >> 3) & 15 == AV1SequenceHeader.obuType,
                   let sequence = AV1SequenceHeader(obu: part.prefix(from: start, limit: min(length, 256))) {
                    coding.width = max(coding.width, sequence.maxWidth)
                    coding.height = max(coding.height, sequence.maxHeight)
                    if throughLibheif {
                        coding.overrideWidth = max(coding.overrideWidth, sequence.largestWidth)
                        coding.overrideHeight = max(coding.overrideHeight, sequence.largestHeight)
                    }
                }
                offset = start + length
            }
        }
        return coding
    }

    /// An OBU size (`leb128()`, at most 8 bytes), moving `index` past it.
    private static func leb128(_ part: ISOItemBytes, at index: inout Int) -> Int? {
        var value = 0
        for shift in 0..<8 {
            guard let byte = part[index] else { return nil }
            index += 1
            value |= Int(byte & 0x7F) << (7 * shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    static let hvc1 = ISOBoxes.fourCC("hvc1"), av01 = ISOBoxes.fourCC("av01")
    static let hvcC = ISOBoxes.fourCC("hvcC"), av1C = ISOBoxes.fourCC("av1C")
}
