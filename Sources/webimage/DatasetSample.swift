import Foundation

/// One sample of a `--output-format webdataset` shard: its key, the image (none when it failed)
/// and the fields of its `{key}.json`, named as img2dataset names them (`status` is `success` or
/// `failed_to_download`, the reason in `error_message`); `--save-cols` columns sit beside them.
struct DatasetSample: Sendable {
    /// The sample's number in the input (from 0): its shard is `number / shardSize`.
    var number: Int
    var url: String
    var fields: SampleFields
    var image: Data?
    /// The image's file extension (`jpg`, `png`, `webp`, …).
    var format: String?
    var width: Int?
    var height: Int?
    var error: String?
}

/// `{key}.json`, encoded with `JSONEncoder`: the fixed fields, then the saved columns.
struct DatasetSampleJSON: Encodable {
    var key: String
    var sample: DatasetSample

    private struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { return nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        try container.encode(key, forKey: Name("key"))
        try container.encode(sample.url, forKey: Name("url"))
        try container.encode(sample.image == nil ? "failed_to_download" : "success", forKey: Name("status"))
        try container.encode(sample.error, forKey: Name("error_message"))  // null when none, as img2dataset writes it
        try container.encode(sample.image?.count, forKey: Name("size"))
        try container.encode(sample.width, forKey: Name("width"))
        try container.encode(sample.height, forKey: Name("height"))
        try container.encode(sample.format, forKey: Name("format"))
        try container.encode(sample.fields.caption, forKey: Name("caption"))
        for (column, value) in sample.fields.saved where !DatasetColumns.reservedNames.contains(column) {
            try container.encode(value, forKey: Name(column))
        }
    }

    static func data(key: String, sample: DatasetSample) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(DatasetSampleJSON(key: key, sample: sample))
    }
}

/// `{shard}_stats.json`: what one shard holds.
struct DatasetShardStats: Encodable {
    var shard: String
    var count = 0
    var successes = 0
    var failedToDownload = 0
    var bytes = 0

    enum CodingKeys: String, CodingKey {
        case shard, count, successes, bytes
        case failedToDownload = "failed_to_download"
    }
}
