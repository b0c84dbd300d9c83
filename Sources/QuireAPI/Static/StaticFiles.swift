import QuireHTTP

/// The files Quire serves as they are, compiled into the binary as SwiftPM resources (`.embedInCode`, see
/// `Package.swift`): the OpenAPI document, the web client `quire.js`, and the demo page with its script and
/// style sheet. Each is a prepared response built once, with a strong `ETag` from its bytes and the
/// `Cache-Control` of its kind (``CachePolicy``).
///
/// | path | file | cache |
/// | --- | --- | --- |
/// | `/openapi.yaml` | `openapi.yaml` (the repository's, through a symlink) | `document` |
/// | `/demo` | `Static/demo.html` | `page`: revalidated |
/// | `/client/quire.js`, `/client/demo.js`, `/client/demo.css` | `Static/…` | `asset`: long-lived |
///
/// The demo page names its script and style sheet, and the script names `quire.js`, with `?v=<tag>` (the
/// placeholder `@version(<file>)@` is replaced here): a deployment that changes an asset changes the URL
/// the page asks for, so the long-lived caching of assets never shows a stale client.
enum StaticFiles {
    /// A file and how it is served.
    struct File {
        let route: String
        let name: String
        let contentType: String
        var bytes: [UInt8]
        var headers: HTTPHeaders = [:]
    }

    /// The policy of the demo page: its own script and style sheet only (no inline script or style, no
    /// `eval`), requests to this origin only, no framing.
    static let demoContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// Every static file, placeholders replaced.
    static func files() -> [File] {
        var files = [
            File(
                route: "/openapi.yaml", name: "openapi.yaml", contentType: "application/yaml; charset=utf-8",
                bytes: PackageResources.openapi_yaml),
            File(
                route: "/client/quire.js", name: "quire.js", contentType: "text/javascript; charset=utf-8",
                bytes: PackageResources.quire_js),
            File(
                route: "/client/demo.css", name: "demo.css", contentType: "text/css; charset=utf-8",
                bytes: PackageResources.demo_css),
            File(
                route: "/client/demo.js", name: "demo.js", contentType: "text/javascript; charset=utf-8",
                bytes: PackageResources.demo_js),
            File(
                route: "/demo", name: "demo.html", contentType: "text/html; charset=utf-8",
                bytes: PackageResources.demo_html,
                headers: [
                    "Content-Security-Policy": demoContentSecurityPolicy, "Referrer-Policy": "no-referrer",
                ]),
        ]
        // In order: a file's placeholders name files before it, whose bytes are final.
        for index in files.indices {
            var text = String(decoding: files[index].bytes, as: UTF8.self)
            for named in files[..<index] {
                let tag = CachePolicy.entityTag(of: named.bytes).filter { $0 != "\"" }
                text = text.replacing("@version(\(named.name))@", with: tag)
            }
            files[index].bytes = Array(text.utf8)
        }
        return files
    }

    /// The demo page's own files, left out when the demo is off on a server open to the network.
    static let demoRoutes: Set<String> = ["/demo", "/client/demo.js", "/client/demo.css"]

    /// Adds a `GET` route per file (without the demo page's when `demoPage` is false: they answer `404`).
    static func add(to router: inout Router, cachePolicy: CachePolicy, demoPage: Bool = true) {
        for file in files() where demoPage || !demoRoutes.contains(file.route) {
            var headers = file.headers
            headers.add("Content-Type", file.contentType)
            headers.add("X-Content-Type-Options", "nosniff")
            headers.add("ETag", CachePolicy.entityTag(of: file.bytes))
            headers.add(
                "Cache-Control", cachePolicy.headerValue(for: CachePolicy.kind(method: "GET", route: file.route)))
            let prepared = PreparedResponse(Response(status: 200, headers: headers, body: file.bytes))
            router.on("GET", file.route) { _, _ in .prepared(prepared) }
        }
    }
}
