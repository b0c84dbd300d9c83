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
        let (median, low, high) = (sorted[sorted.count / 2], sorted[0], sorted[sorted.count - 1])
        return "\(name): median \(format(median)) \(unit) (min \(format(low)), max \(format(high)))"
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

/// Terminates the process with `code`.
func exit(_ code: Int32) -> Never {
    #if canImport(Glibc)
        Glibc.exit(code)
    #else
        Darwin.exit(code)
    #endif
}
