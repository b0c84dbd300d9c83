/// Request ids: 64 random bits in hex, enough to find one request in the logs.
enum RequestID {
    static func generate() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
