// swift-tools-version:6.1
import PackageDescription

/// One set of settings for every target: Swift 6 language mode (strict concurrency) everywhere.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The server's modules in release builds: generic code (the page cache's table, the router's tree) is
/// specialized across modules rather than called through witness tables and metadata looked up per request.
let serverSwiftSettings: [SwiftSetting] =
    swiftSettings + [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "quire",
    // The SDK's floor (QuireClient): `Task.sleep(for:)` (Duration) needs iOS 16 and macOS 13, and UIKitAdapter's
    // `reconfigureItems` iOS 15; its dependencies ask for iOS 13 and macOS 10.15. They apply to the whole package, but
    // the server is built and run on Linux, where they do not apply.
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .executable(name: "quire", targets: ["quire"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
        .library(name: "QuireClient", targets: ["QuireClient"]),
    ],
    // PostgreSQL (on by default): `storage.kind: postgres`, the shared store of a cluster. `make run` builds the server
    // without it (scripts/build-run): postgres-nio brings swift-nio and swift-nio-ssl with a BoringSSL of its own, about
    // 40% of a first release build, for a store the embedded default (SQLite) does not use.
    traits: [
        .trait(
            name: "PostgreSQL", description: "The shared store of a cluster (storage.kind: postgres), on postgres-nio."),
        .default(enabledTraits: ["PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: [.defaults, "YAML"]),
        // The configuration file's `sources:` list, a list of mappings, which swift-configuration's YAML provider cannot
        // hold (already in the graph through swift-configuration's YAML trait).
        .package(url: "https://github.com/jpsim/Yams", "5.4.0"..<"7.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // HMAC for the token fuzz target's signed inputs (already in the graph through jwt-kit).
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"6.0.0"),
        // The SDK's wire: a client generated from openapi.yaml (build plugin), URLSession as its transport.
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Tests only: a transport that streams on Linux, to run the SDK over the event stream.
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The shared store of a cluster (storage.kind: postgres).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `make docs`: the `generate-documentation` command (DocC) for QuireClient. A command plugin: nothing of it
        // is linked into any target.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C at the bottom: libmicrohttpd through pkg-config, plus the shim for its variadic functions.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // zlib for HTTP compression, called directly rather than through compress-nio: compress-nio is built
        // on swift-nio (its ByteBuffer), which nothing else here uses and which would add minutes to every clean
        // build in CI; zlib is in every Debian image (priority "required"), its API is small, and Quire needs
        // what a wrapper does not give: raw deflate fragments spliced with crc32_combine (a shared answer
        // compressed once for many responses) and Z_SYNC_FLUSH per event of a stream.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libpq, PostgreSQL's own C client, through pkg-config: it speaks the replication protocol (CopyBoth) that
        // postgres-nio does not, for sources (QuireSources).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Strict request framing, run over every request's header fields: C compiled at -O2 (vectorized), which
        // the `static inline` functions of a system module's header are not.
        .target(name: "CQuireFraming"),
        // HTTPS on GnuTLS (the library libmicrohttpd's TLS is built on): certificates, the reads and the cork of
        // every TLS connection, and the client of `quire health`. C of its own, as CQuireFraming is; its headers are
        // found in the system's include path, as libmicrohttpd's are.
        .target(
            name: "CQuireTLS",
            linkerSettings: [.linkedLibrary("gnutls"), .linkedLibrary("microhttpd")]
        ),
        // The only Swift module that touches libmicrohttpd (QuireSources touches libpq).
        .target(
            name: "QuireHTTP",
            dependencies: [
                "CMicroHTTPD",
                "CQuireFraming",
                "CQuireTLS",
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: serverSwiftSettings
        ),
        // The release's version (CHANGELOG.md's newest release): the server's and the SDK's, from one constant.
        .target(name: "QuireVersion", swiftSettings: swiftSettings),
        // The product: lists, versions, validation, windows, the diff. No HTTP, no SQL.
        .target(name: "QuireCore", swiftSettings: serverSwiftSettings),
        // JSON Web Tokens (jwt-kit): keys, verification, scopes. Its own module so that the token parser can be
        // fuzzed without the rest of the service.
        .target(
            name: "QuireAuth",
            dependencies: [.product(name: "JWTKit", package: "jwt-kit")],
            swiftSettings: serverSwiftSettings
        ),
        // Routes, JSON in and out, problem documents.
        .target(
            name: "QuireAPI",
            dependencies: [
                "QuireHTTP",
                "QuireCore",
                "QuireAuth",
                "QuireSources",
                "QuireVersion",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The files served as they are, compiled into the binary (no file beside it to ship): the OpenAPI
            // document (a symlink to the repository's openapi.yaml, which other tools read), the web client and
            // the demo page. See Static/StaticFiles.swift.
            resources: [
                .embedInCode("Static/openapi.yaml"),
                .embedInCode("Static/quire.js"),
                .embedInCode("Static/demo.html"),
                .embedInCode("Static/demo.css"),
                .embedInCode("Static/demo.js"),
            ],
            swiftSettings: serverSwiftSettings
        ),
        // Durable lists: the core's ListStore on SQLite (through GRDB), with versioned migrations.
        .target(
            name: "QuireStore",
            dependencies: [
                "QuireCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The shared store of a cluster: lists in PostgreSQL (postgres-nio), conditional commits, the change log
        // and its feed (LISTEN/NOTIFY). Its own module, so that SQLite-only code never links NIO.
        .target(
            name: "QuirePostgres",
            dependencies: [
                "QuireCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Sources: lists kept from an app's own PostgreSQL tables through logical replication. Replication/:
        // connections through libpq (plain SQL and the replication protocol: slots, exported snapshots, the stream,
        // status updates) and the pgoutput decoder, pure Swift; the only Swift module that touches libpq. Rows/: a
        // source's configuration, its check against the catalog, a row in the core's terms.
        .target(
            name: "QuireSources",
            dependencies: ["CLibPQ", "QuireCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: serverSwiftSettings),
        // The Swift SDK: the session loop through the client swift-openapi-generator makes from openapi.yaml
        // (symlinked into the target), and the window model (also the tests' oracle). Foundation, the
        // OpenAPI runtime and its URLSession transport only, and the release's version (its User-Agent).
        .target(
            name: "QuireClient",
            dependencies: [
                "QuireVersion",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Fixtures and a loopback HTTP client for the tests.
        .target(
            name: "QuireTesting",
            dependencies: ["QuireHTTP", "QuireAPI", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quire",
            dependencies: [
                "QuireAPI",
                "QuireAuth",
                "QuireHTTP",
                "QuireCore",
                "QuireSources",
                "QuireStore",
                "QuireVersion",
                .target(name: "QuirePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Yams", package: "Yams"),
            ],
            // glibc's malloc, not mimalloc: libmicrohttpd mallocs each connection's 16 KiB memory pool, which
            // mimalloc serves page-aligned from its 16 KiB size class, so an idle event stream would keep two whole
            // resident pages of it (its request at the start, the request's field records at the end) where glibc's
            // packed pools share their edge pages (`scripts/bench.py streams`, whose breakdown shows the pool's
            // pages). scripts/wire-test checks that the binary and libmicrohttpd resolve malloc to glibc.
            swiftSettings: serverSwiftSettings
        ),
        // The parsers that face the network as libFuzzer targets: scripts/fuzz builds them with AddressSanitizer
        // and libFuzzer's coverage; a plain build replays corpora.
        .target(name: "CFuzzer"),
        .executableTarget(
            name: "quire-fuzz",
            dependencies: [
                "QuireCore", "QuireAuth", "QuireAPI", "QuireHTTP", "QuireSources", "CFuzzer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The example app of Examples/GeneratedClient (a package of its own, as an app team would make it), built
        // here too so that `make test` compiles it with the service's dependencies instead of a second copy of
        // them: the client swift-openapi-generator makes from openapi.yaml, and a session loop through it
        // (scripts/client-test). A warning in the generated code or the loop fails the build.
        .executableTarget(
            name: "GeneratedClientLoop",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Examples/GeneratedClient/Sources/GeneratedClientLoop",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .executableTarget(
            name: "quire-bench",
            dependencies: ["QuireCore", "QuireClient", "QuireStore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuireHTTPTests",
            dependencies: ["QuireHTTP", "QuireTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuireAPITests",
            dependencies: [
                "QuireAPI", "QuireAuth", "QuireHTTP", "QuireCore", "QuireClient", "QuireSources", "QuireStore",
                "QuireTesting", "QuireVersion", "quire",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                // Test only: the SDK's event stream on Linux (URLSessionTransport buffers bodies there).
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuireCoreTests",
            dependencies: [
                "QuireCore",
                "QuireClient",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        // The pgoutput decoder on messages captured from a real PostgreSQL (scripts/test/capture-pgoutput), the
        // connections against one (QUIRE_TEST_POSTGRES_URL, with wal_level logical; without it they skip), and the
        // rows' terms (configuration, values, order keys).
        .testTarget(
            name: "QuireSourcesTests",
            dependencies: [
                "QuireSources",
                "QuireCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuireStoreTests",
            dependencies: [
                "QuireStore", "QuireCore", "QuireAPI", "QuireAuth", "QuireHTTP", "QuireTesting", "quire",
                // Files of an earlier schema, written by hand.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The shared store against a real PostgreSQL (QUIRE_TEST_POSTGRES_URL; without it they skip), and the keys
        // of it that `quire` reads. ListingChecks.swift is QuireStoreTests' file (a symlink): both stores pass it.
        .testTarget(
            name: "QuirePostgresTests",
            dependencies: [
                .target(name: "QuirePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                "QuireCore", "QuireAPI", "QuireAuth", "QuireHTTP", "QuireTesting", "quire",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // QuireAuth on its own: scopes, keys, verification, development tokens. TestTokens.swift is QuireAPITests'
        // file (a symlink): the tokens of both.
        .testTarget(
            name: "QuireAuthTests",
            dependencies: ["QuireAuth", .product(name: "JWTKit", package: "jwt-kit")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuireClientTests",
            dependencies: [
                "QuireClient",
                // A transport of its own, to see what the SDK sends without a server.
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// The targets `product` is made of (its own and every one they depend on, in this package) and the packages they
/// use: what a build of that product alone needs of the manifest above.
@MainActor func closure(of product: String) -> (targets: Set<String>, packages: Set<String>) {
    var targets: Set<String> = []
    var packages: Set<String> = []
    var pending = [product]
    while let name = pending.popLast() {
        guard targets.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else {
            continue
        }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            case .productItem(_, let package?, _, _): packages.insert(package)
            default: break
            }
        }
    }
    return (targets, packages)
}

/// Keeps only `product`, the targets it is made of and the packages they use. SwiftPM builds the tools of every
/// build-tool plugin in the graph before it plans a build, whatever product is asked for: with the whole graph a
/// build of the server alone would also build the OpenAPI generator for QuireClient's plugin (OpenAPIKit, Yams,
/// swift-algorithms, ArgumentParser: about a third of a release build of the server), and resolve packages only
/// the tests use.
@MainActor func keepOnly(_ product: String, closure kept: (targets: Set<String>, packages: Set<String>)) {
    package.targets.removeAll { !kept.targets.contains($0.name) }
    package.products = [.executable(name: product, targets: [product])]
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return true }
        return !kept.packages.contains { location.hasSuffix("/\($0)") }
    }
}

// Two ways scripts/fuzz builds quire-fuzz (libFuzzer, AddressSanitizer); both leave every other build alone.
let fuzz = closure(of: "quire-fuzz")
let fuzzTargets = fuzz.targets
// Quire's C that parses what the network sends: instrumented like its Swift modules when quire-fuzz is built for
// fuzzing, through C settings. (CFuzzer, libFuzzer's entry point, is C too and is not instrumented.)
let fuzzedCTargets: Set<String> = ["CQuireFraming"]
if Context.environment["QUIRE_FUZZ_INSTRUMENT"] == "1" || Context.environment["QUIRE_FUZZ_ONLY"] == "1" {
    for target in package.targets where fuzzTargets.contains(target.name) && fuzzedCTargets.contains(target.name) {
        target.cSettings =
            (target.cSettings ?? []) + [
                .unsafeFlags(["-fsanitize=address", "-fsanitize-coverage=trace-cmp,inline-8bit-counters,pc-table"])
            ]
    }
}
if Context.environment["QUIRE_FUZZ_INSTRUMENT"] == "1" {
    // `make test`: in the tests' own build directory, on the dependencies the tests were built from. Only
    // quire-fuzz and Quire's Swift modules are compiled again, with the sanitizer and libFuzzer's coverage (flags
    // given to these targets alone: -Xswiftc would reach every package and rebuild all of them), which is minutes
    // less than a build directory of its own. The coverage that steers the search is Quire's code.
    let instrumentation: [String] = [
        "-sanitize=address", "-sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table", "-DQUIRE_FUZZING",
    ]
    // CFuzzer, CQuireTLS and Quire's other C: Swift settings do not apply to them (see fuzzedCTargets above).
    for target in package.targets
    where fuzzTargets.contains(target.name) && target.type != .system && target.name != "CFuzzer"
        && target.name != "CQuireTLS" && !fuzzedCTargets.contains(target.name)
    {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(instrumentation)]
        if target.type == .executable {
            target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=address"])]
        }
    }
} else if Context.environment["QUIRE_FUZZ_ONLY"] == "1" {
    // `make fuzz`: every Swift module instrumented (flags through -Xswiftc), in a build directory of its own, with
    // quire-fuzz alone (see keepOnly).
    keepOnly("quire-fuzz", closure: fuzz)
} else if Context.environment["QUIRE_SERVER_ONLY"] == "1" {
    // `make run`: the server alone, in a build directory of its own (.build-run), so that a first `make run` builds
    // neither the OpenAPI generator nor anything else only the SDK, the benchmarks and the tests need.
    keepOnly("quire", closure: closure(of: "quire"))
}
