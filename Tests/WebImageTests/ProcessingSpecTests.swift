import Testing
import WebImage

@Suite("Processing specs (fetch --process)")
struct ProcessingSpecTests {
    @Test(arguments: [
        ("resize:256x256:fill,round:12,blur:2", "resize(256x256,fill,upscale:false),round(12),blur(2)"),
        ("resize:100x50", "resize(100x50,fit,upscale:false)"),
        ("resize:100x50:exact:upscale", "resize(100x50,exact,upscale:true)"),
        ("grayscale", "grayscale"),
        ("rotate:90", "rotate(90)"),
        ("rotate:-90", "rotate(270)"),
        ("rotate:30:ffffff", "rotate(30,background:ffffffff)"),
        ("rotate:12.5", "rotate(12.5,background:00000000)"),
        ("crop:0,0,100,100", "crop(0,0,100,100)"),
        ("crop:0,0,100,100,blur:2", "crop(0,0,100,100),blur(2)"),
        ("blur:1.5,crop:5,6,7,8,grayscale", "blur(1.5),crop(5,6,7,8),grayscale"),
        ("crop:square", "crop(square)"),
        ("circle", "circle"),
        ("circle:3:ffffff80", "circle(border:3,ffffff80)"),
        ("flip:h,flip:v", "flip(horizontal),flip(vertical)"),
        ("tint:ff000080", "tint(ff000080)"),
        ("round:12:2:000000", "round(12,border:2,000000ff)"),
        (" resize:10x10 , circle ", "resize(10x10,fit,upscale:false),circle"),
        ("trim:10,sharpen:1.5,pixelate:8", "trim(10),sharpen(1.5),pixelate(8)"),
        ("padding:4", "padding(4,4,4,4,00000000)"),
        ("padding:1,2,3,4:ffffff,flatten:000000", "padding(1,2,3,4,ffffffff),flatten(000000)"),
    ])
    func parses(spec: String, identifiers: String) throws {
        let processors = try ImageProcessorSpec.parse(spec)
        #expect(processors.map(\.identifier).joined(separator: ",") == identifiers)
    }

    @Test(arguments: [
        ("resize:256", "resize:256"),
        ("resize:0x10", "resize:0x10"),
        ("resize:10x10:stretch", "resize:10x10:stretch"),
        ("round:12,emboss:3", "emboss:3"),
        ("blur", "blur"),
        ("blur:much", "blur:much"),
        ("blur:-2", "blur:-2"),
        ("crop:0,0,100", "crop:0,0,100"),
        ("crop:0,0,-5,10", "crop:0,0,-5,10"),
        ("crop:a,b,c,d", "crop:a"),  // a letter after a comma starts a step: the crop has one value
        ("flip:x", "flip:x"),
        ("rotate:30:white", "rotate:30:white"),
        ("tint:ff00", "tint:ff00"),
        ("round:12:2", "round:12:2"),
        ("circle:2", "circle:2"),
        ("grayscale:1", "grayscale:1"),
        ("resize:10x10,,blur:1", "resize:10x10,"),
        ("", ""),
        ("zoom:2,circle", "zoom:2"),
        ("trim:256", "trim:256"), ("trim:-1", "trim:-1"), ("pixelate:0", "pixelate:0"), ("pixelate:99999999999999999999", "pixelate:99999999999999999999"),
        ("sharpen:nan", "sharpen:nan"), ("sharpen:101", "sharpen:101"), ("padding:1,2,3", "padding:1,2,3"),
        ("padding:65536", "padding:65536"), ("padding:-1", "padding:-1"), ("padding:1:red", "padding:1:red"), ("flatten", "flatten"),
    ])
    func rejectsNamingTheBadPart(spec: String, part: String) {
        do {
            let processors = try ImageProcessorSpec.parse(spec)
            Issue.record("'\(spec)' parsed as \(processors.map(\.identifier))")
        } catch {
            guard case let .invalidSpec(badPart, reason) = error else { Issue.record("\(error)"); return }
            #expect(badPart == part, "\(reason)")
            #expect(!reason.isEmpty)
        }
    }

    @Test func parsedProcessorsRun() throws {
        let image = Image(format: .png, pixelWidth: 8, pixelHeight: 6, pixels: [UInt8](repeating: 200, count: 8 * 6 * 4), isOpaque: true)
        let result = try image.processed(by: ImageProcessorSpec.parse("resize:4x4:fill,round:1,blur:1,grayscale"))
        #expect(result.pixelWidth == 4 && result.pixelHeight == 4 && !result.isOpaque)
    }
}
