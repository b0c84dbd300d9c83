import Foundation

/// A decoded RFC 9457 problem document, for assertions.
struct ProblemDocument {
    let type: String
    let title: String
    let status: Int
    let detail: String
    let members: [String: Any]

    init(_ body: [UInt8]) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let type = object["type"] as? String, let title = object["title"] as? String,
            let status = object["status"] as? Int, let detail = object["detail"] as? String
        else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: String(decoding: body, as: UTF8.self)))
        }
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        members = object
    }
}
