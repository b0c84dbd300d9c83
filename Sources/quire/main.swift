import ArgumentParser

// The quire executable. Termination signals are blocked before any thread starts, so that every
// thread (libmicrohttpd's and Swift concurrency's included) inherits the mask and only `sigwait` in
// `quire serve` receives them. The entry point stays synchronous: an async top-level would hand the
// main thread to the dispatch main queue, which unblocks them again.
TerminationSignals.blockInThisThread()
QuireCommand.main()
