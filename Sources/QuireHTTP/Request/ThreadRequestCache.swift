internal import CQuireFraming
import Glibc

/// What a libmicrohttpd thread keeps from the request it served for the next one it serves, whichever connection
/// that comes from: the request's path, and the buffer its fields were copied into.
///
/// A thread serves one request at a time, so what it keeps is ready for its next request; a connection keeps
/// nothing between its requests. Kept by a connection, they would stay with it while it waits: with every idle
/// keep-alive connection, and with every event stream for its whole life (a stream's connection serves no other
/// request; `scripts/bench.py streams` shows an idle stream's memory). Kept by the thread, they cost two objects a
/// thread, and a request on a busy connection finds them all the same.
///
/// Only its own thread touches a cache (through a C thread-local pointer, `quire_thread_request_cache`), so it needs no lock.
final class ThreadRequestCache {
    /// The path of the thread's previous request (see ``path(_:)``).
    private var lastPath = ""
    /// The buffer of the thread's previous request's fields, written over by the next one's when no request holds it
    /// any longer (see ``RequestFields/of(_:sizes:reusing:)``). Accessed in one place, the access handler, on its
    /// thread, never while another access runs: the run-time exclusivity check (two calls into the runtime on
    /// every request) is left out.
    @exclusivity(unchecked) var fieldBuffer: FieldBytes?

    /// The calling thread's cache (made on the thread's first request), unretained: the thread holds it until it
    /// ends (`quire_thread_set_request_cache` releases it then; libmicrohttpd's threads end when its daemon stops),
    /// so a caller borrows it (`_withUnsafeGuaranteedRef`) without a retain and release.
    static var current: Unmanaged<ThreadRequestCache> {
        if let held = quire_thread_request_cache() { return Unmanaged.fromOpaque(held) }
        let cache = Unmanaged.passRetained(ThreadRequestCache())
        // Without a notice of the thread's end (no pthread key left) the cache is never released: a path and at most
        // 4 KiB of fields for each thread that ever served a request.
        _ = quire_thread_set_request_cache(cache.toOpaque()) { cache in
            guard let cache else { return }
            Unmanaged<ThreadRequestCache>.fromOpaque(cache).release()
        }
        return cache
    }

    /// The request's path (`url`, as libmicrohttpd decoded it) as a string: the thread's previous request's string
    /// when the bytes are the same. Requests mostly repeat a few paths (a client polling its session's changes,
    /// paging one list, a load balancer's health check): comparing the bytes costs much less than decoding them
    /// (`String(cString:)` validates them, and copies them to the heap past 15 bytes, which a session's path is). A
    /// path that was not valid UTF-8 is kept repaired, so it never compares equal and is decoded every time.
    func path(_ url: UnsafePointer<CChar>) -> String {
        var last = lastPath
        let isSame = last.withUTF8 { bytes in
            // strncmp stops at `url`'s end; a path's bytes hold no NUL.
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { strncmp(url, $0, bytes.count) == 0 }
                && url[bytes.count] == 0
        }
        if isSame { return last }
        last = String(cString: url)
        lastPath = last
        return last
    }
}
