// quire-bench: the core's benchmarks (`make bench-core`, release build).
//
// `quire-bench diff [FIGURE...]` prints one line per figure, `NAME: median X UNIT (min Y, max Z)`:
// flat-100k, sectioned-100x1000, version-after-1-op (ms) and versions-1000-memory (MB). Naming figures runs
// only those. For profiling: QUIRE_BENCH_ROUNDS sets the samples per diff figure (41), QUIRE_BENCH_DETAIL
// prints the diff, batch and sequential parts of each.
import QuireCore

let arguments = CommandLine.arguments.dropFirst()
guard arguments.first == "diff" else {
    print("usage: quire-bench diff [FIGURE...]")
    exit(arguments.isEmpty ? 0 : 64)
}
DiffBenchmarks().run(only: Set(arguments.dropFirst()))
