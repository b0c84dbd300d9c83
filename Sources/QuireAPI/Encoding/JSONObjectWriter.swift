import QuireCore

/// Writes one flat JSON object (string, integer and string-array members) for the API's small
/// documents (problems, health). Bulk JSON (lists, pages, changes) is assembled from pre-encoded bytes.
struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var isFirst = true

    mutating func field(_ name: String, _ value: String) {
        key(name)
        JSONWriter.writeString(value, into: &bytes)
    }

    mutating func field(_ name: String, _ value: Int) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func field(_ name: String, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(value, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func key(_ name: String) {
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        isFirst = false
        JSONWriter.writeString(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
