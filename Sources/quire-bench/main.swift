// quire-bench: the core's and the store's benchmarks (`make bench-core`, `make bench-store`, release build).
//
// `quire-bench diff [FIGURE...]` prints one line per figure, `NAME: median X UNIT (min Y, max Z)`:
// flat-100k, sectioned-100x1000, version-after-1-op (ms) and versions-1000-memory (MB). Naming figures runs
// only those. To study one figure: QUIRE_BENCH_ROUNDS sets the samples per diff figure (41), QUIRE_BENCH_DETAIL
// prints the diff, batch and sequential parts of each.
//
// `quire-bench sessions [FIGURE...]` prints what a session answer costs at a 100-item and at a 20,000-item
// window (extend-next-50, changes-after-1-write, extend-with-keep), with the ratio next to its target.
//
// `quire-bench store [FIGURE...]` prints the durable store's figures: ops-batch-10-on-10k and put-10k-1pct
// (p50 and p99 in ms), startup-1m (seconds to open and load 1,000,000 stored items). QUIRE_BENCH_DIR sets
// the folder of the database files (the temporary folder by default).
//
// `quire-bench writes` prints where a one-item insert's time goes on the write path as lists grow (no HTTP).
//
// `quire-bench seed-lists PATH COUNT ITEMS` writes the data set of `scripts/bench.py working-set`.
import QuireCore

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "diff":
    DiffBenchmarks().run(only: Set(arguments.dropFirst()))
case "sessions":
    SessionBenchmarks().run(only: Set(arguments.dropFirst()))
case "store":
    do {
        try StoreBenchmarks().run(only: Set(arguments.dropFirst()))
    } catch {
        print("quire-bench store: \(error)")
        exit(1)
    }
case "writes":
    do {
        try WriteBenchmarks().run()
    } catch {
        print("quire-bench writes: \(error)")
        exit(1)
    }
case "seed-lists":
    do {
        try SeedLists.run(Array(arguments.dropFirst()))
    } catch {
        print("quire-bench seed-lists: \(error)")
        exit(1)
    }
default:
    print(
        "usage: quire-bench diff [FIGURE...] | quire-bench sessions [FIGURE...] | quire-bench store [FIGURE...] | quire-bench writes | quire-bench seed-lists PATH COUNT ITEMS"
    )
    exit(arguments.isEmpty ? 0 : 64)
}
