internal import CTiff
import Foundation

extension TIFFFile {
    /// One stored row of a strip or tile: the image row `y`, its first column `x`, how many
    /// pixels of it lie inside the image (`count`), and its bytes in each plane (one plane for
    /// contiguous samples, `samplesPerPixel` for separate ones), each row starting on a byte.
    struct SampleRow {
        var y: Int
        var x: Int
        var count: Int
        var planes: [UnsafeRawBufferPointer]
    }

    /// Reads the current directory's samples as stored, strip by strip or tile by tile, through
    /// libtiff's raw interface (`TIFFReadEncodedStrip` / `TIFFReadEncodedTile`: libtiff still
    /// decompresses and puts 16-, 32- and 64-bit samples in the machine's byte order), and hands
    /// each row to `body`. One strip or tile (every plane of it) is held at a time, at most
    /// ``maxAllocation`` bytes; a strip or tile libtiff cannot read in full throws its error.
    func readSamples(_ page: Page, _ body: (SampleRow) -> Void) throws(ImageDecodingError) {
        var planar: UInt16 = 1
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_PLANARCONFIG), &planar)
        let planes = planar == UInt16(PLANARCONFIG_SEPARATE) ? page.samplesPerPixel : 1
        let tiled = TIFFIsTiled(tiff) != 0
        var chunkWidth = page.width, chunkHeight = page.height
        if tiled {
            var width: UInt32 = 0, height: UInt32 = 0
            guard webimage_tiff_u32(tiff, UInt32(TIFFTAG_TILEWIDTH), &width) == 1,
                  webimage_tiff_u32(tiff, UInt32(TIFFTAG_TILELENGTH), &height) == 1, width > 0, height > 0
            else { throw failure("no tile size") }
            (chunkWidth, chunkHeight) = (Int(width), Int(height))
        } else {
            var rows: UInt32 = 0
            _ = webimage_tiff_u32(tiff, UInt32(TIFFTAG_ROWSPERSTRIP), &rows)
            chunkHeight = min(rows == 0 ? page.height : Int(rows), page.height)
        }
        // Sizes come from tags: every product is checked, and a strip or tile must fit the cap.
        let sampleBits = (page.samplesPerPixel / planes) * page.bitsPerSample
        let (rowBits, overflow1) = chunkWidth.multipliedReportingOverflow(by: sampleBits)
        let rowBytes = rowBits / 8 + (rowBits % 8 == 0 ? 0 : 1)
        let (planeBytes, overflow2) = rowBytes.multipliedReportingOverflow(by: chunkHeight)
        let (totalBytes, overflow3) = planeBytes.multipliedReportingOverflow(by: planes)
        guard !overflow1, !overflow2, !overflow3, totalBytes <= maxAllocation else {
            throw .corrupt(format: .tiff, reason: "a \(tiled ? "tile" : "strip") of \(chunkWidth) × \(chunkHeight) is over the memory limit")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(totalBytes, 1), alignment: 16)
        defer { buffer.deallocate() }
        memset(buffer.baseAddress!, 0, buffer.count)  // one call, not a loop (debug builds)
        for top in stride(from: 0, to: page.height, by: chunkHeight) {
            let rows = min(chunkHeight, page.height - top)
            for left in stride(from: 0, to: page.width, by: tiled ? chunkWidth : page.width) {
                for plane in 0..<planes {
                    // A tile is always whole; a strip holds fewer rows at the bottom of the image.
                    let wanted = tiled ? planeBytes : rows * rowBytes
                    let target = buffer.baseAddress! + plane * planeBytes
                    let read = tiled
                        ? TIFFReadEncodedTile(tiff, TIFFComputeTile(tiff, UInt32(left), UInt32(top), 0, UInt16(plane)), target, tmsize_t(wanted))
                        : TIFFReadEncodedStrip(tiff, TIFFComputeStrip(tiff, UInt32(top), UInt16(plane)), target, tmsize_t(wanted))
                    guard read >= wanted else { throw failure("cannot read \(tiled ? "tile" : "strip") at row \(top)") }
                }
                let count = min(chunkWidth, page.width - left)
                for row in 0..<rows {
                    let planeRows = (0..<planes).map { plane in
                        let start = plane * planeBytes + row * rowBytes
                        return UnsafeRawBufferPointer(rebasing: buffer[start..<start + rowBytes])
                    }
                    body(SampleRow(y: top + row, x: left, count: count, planes: planeRows))
                }
            }
        }
    }
}
