// quire-bench: the core's benchmarks. `quire-bench diff` prints one line per figure:
// `NAME: median X UNIT (min Y, max Z)`.
import QuireCore

let arguments = CommandLine.arguments.dropFirst()
guard arguments.first == "diff" else {
    print("usage: quire-bench diff [FIGURE...]")
    exit(arguments.isEmpty ? 0 : 64)
}
DiffBenchmarks().run(only: Set(arguments.dropFirst()))
