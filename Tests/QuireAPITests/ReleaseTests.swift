import Foundation
import QuireClient
import QuireHTTP
import QuireTesting
import QuireVersion
import Synchronization
import Testing

/// The release's version: one constant (QuireVersion), CHANGELOG.md's newest release, and what the binary and the
/// SDK say of it.
@Suite("Release")
struct ReleaseTests {
    static let changelog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("CHANGELOG.md")

    /// The release headings of CHANGELOG.md (`## [1.2.3] - 2026-12-02`), newest first, and whether the file opens
    /// as Keep a Changelog asks: a title, then an `## [Unreleased]` heading above the releases.
    static func releases() throws -> (versions: [String], dates: [String], hasUnreleased: Bool) {
        let lines = try String(contentsOf: changelog, encoding: .utf8).split(separator: "\n")
        let headings = lines.filter { $0.hasPrefix("## ") }
        let release = /^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/
        let matches = headings.compactMap { $0.wholeMatch(of: release) }
        return (
            matches.map { String($0.1) }, matches.map { String($0.2) },
            lines.first == "# Changelog" && headings.first == "## [Unreleased]"
        )
    }

    @Test("the version is CHANGELOG.md's newest release, and every heading there is a release or Unreleased")
    func versionIsTheChangelogsNewest() throws {
        let (versions, dates, hasUnreleased) = try Self.releases()
        #expect(hasUnreleased)
        #expect(versions.first == Release.version)
        let headings = try String(contentsOf: Self.changelog, encoding: .utf8).split(separator: "\n").filter {
            $0.hasPrefix("## ")
        }
        #expect(headings.count == versions.count + 1, "a heading neither Unreleased nor `## [x.y.z] - YYYY-MM-DD`")
        #expect(Set(versions).count == versions.count)
        #expect(dates == dates.sorted(by: >), "newest first")
    }

    @Test("the SDK names itself and the release in User-Agent")
    func sdkUserAgent() async throws {
        let seen = Mutex<[String]>([])
        // A real server that records what the SDK sends, and refuses the session so that open() ends at once.
        let server = try TestServer(
            responder: ClosureResponder { request in
                seen.withLock { $0.append(request.headers["user-agent"] ?? "none") }
                var headers = HTTPHeaders()
                headers.add("Content-Type", "application/problem+json")
                return .response(
                    Response(
                        status: 404, headers: headers,
                        text:
                            #"{"type":"https://quire.dev/problems/list-not-found","title":"List not found","status":404,"detail":"No list inbox."}"#
                    ))
            })
        defer { server.stop() }
        let client = QuireClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        let session = client.session(list: "inbox", options: .init(limit: 5, transport: .longPolls))
        await #expect(throws: QuireClientError.self) { try await session.open() }
        #expect(seen.withLock { $0 } == ["QuireClient/\(Release.version)"])
    }
}
