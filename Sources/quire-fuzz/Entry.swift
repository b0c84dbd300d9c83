#if QUIRE_FUZZING
    import Glibc

    // Built by scripts/fuzz with swiftc -sanitize=fuzzer,address -parse-as-library -D QUIRE_FUZZING:
    // libFuzzer's main calls these. The target is named by QUIRE_FUZZ_TARGET.

    /// Set once in `LLVMFuzzerInitialize`, before libFuzzer's first input; read only after, on libFuzzer's
    /// one thread.
    nonisolated(unsafe) private var target = FuzzTarget.json

    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<CInt>?,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
    ) -> CInt {
        let name = getenv("QUIRE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let chosen = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            report("QUIRE_FUZZ_TARGET must name one of: \(names)")
            exit(2)
        }
        target = chosen
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        do {
            try target.run(bytes)
        } catch {
            // A broken property is a finding like a crash: libFuzzer saves the input on abort.
            report("quire-fuzz \(target.rawValue): \(error)")
            abort()
        }
        return 0
    }

    /// One line on standard error (file descriptor 2: the C `stderr` variable is shared mutable state
    /// to Swift 6).
    private func report(_ line: String) {
        let text = Array((line + "\n").utf8)
        _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
#else
    import Foundation

    /// Without libFuzzer (a plain `swift build`): replays inputs, so that the corpora are also run in the
    /// ordinary test build.
    ///
    ///     quire-fuzz <target> <file or directory>...
    @main
    struct Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
                FileHandle.standardError.write(Data("usage: quire-fuzz <\(names)> <file or directory>...\n".utf8))
                exit(2)
            }
            var count = 0
            var failures = 0
            for path in arguments.dropFirst() {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    count += 1
                    let outcome = data.withUnsafeBytes { bytes in
                        Result { () throws(FuzzTarget.Broken) in try target.run(bytes) }
                    }
                    if case .failure(let broken) = outcome {
                        failures += 1
                        print("\(file): \(broken)")
                    }
                }
            }
            print("quire-fuzz \(name): \(count) inputs replayed, \(failures) broken")
            exit(failures == 0 ? 0 : 1)
        }

        static func files(at path: String) -> [String] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
            guard isDirectory.boolValue else { return [path] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().map { path + "/" + $0 }
        }
    }
#endif
