#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Summary of repeated measurements, printed as `NAME: median X UNIT (min Y, max Z)`.
struct Figure {
    let name: String
    let unit: String
    let samples: [Double]

    var line: String {
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        return "\(name): median \(format(median)) \(unit) (min \(format(sorted[0])), max \(format(sorted[sorted.count - 1])))"
    }

    private func format(_ value: Double) -> String {
        let scaled = (value * 1000).rounded() / 1000
        return "\(scaled)"
    }
}

/// Milliseconds taken by `body`.
func milliseconds(_ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    let duration = clock.measure(body)
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds) / 1e15
}

/// Resident memory of the process in bytes (`/proc/self/statm`), 0 where unavailable.
func residentBytes() -> Int {
    #if canImport(Glibc)
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard withUnsafeMutablePointer(to: &size, { sizePointer in
        withUnsafeMutablePointer(to: &resident) { fscanf_pair(file, sizePointer, $0) }
    }) else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return 0
    #endif
}

#if canImport(Glibc)
/// Reads two integers from the start of `file`.
private func fscanf_pair(_ file: UnsafeMutablePointer<FILE>, _ first: UnsafeMutablePointer<Int>, _ second: UnsafeMutablePointer<Int>) -> Bool {
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = fread(&buffer, 1, buffer.count - 1, file)
    let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
    guard fields.count >= 2, let a = Int(fields[0]), let b = Int(fields[1]) else { return false }
    first.pointee = a
    second.pointee = b
    return true
}
#endif

/// Terminates the process with `code`.
func exit(_ code: Int32) -> Never {
    #if canImport(Glibc)
    Glibc.exit(code)
    #else
    Darwin.exit(code)
    #endif
}

/// SplitMix64, so every run edits the same items.
struct BenchGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
