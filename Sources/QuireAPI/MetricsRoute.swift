import QuireCore
import QuireHTTP

/// `GET /metrics`: the service's state in the Prometheus text exposition format (version 0.0.4).
extension APIContext {
    func metrics() -> Reply {
        let totals = registry.totals
        let samples: [(name: String, type: String, help: String, value: Int)] = [
            ("quire_lists", "gauge", "Lists held.", totals.lists),
            ("quire_items", "gauge", "Items in all lists, children included.", totals.items),
            ("quire_sessions_active", "gauge", "Sessions held.", sessions.count),
            ("quire_sessions_evicted_total", "counter", "Sessions evicted past the capacity.", sessions.evictionCount),
            ("quire_sessions_expired_total", "counter", "Sessions expired idle.", sessions.expirationCount),
            ("quire_long_polls_waiting", "gauge", "Requests waiting for changes.", longPolls.count),
            ("quire_page_cache_hits_total", "counter", "Stateless pages answered from the cache.", pageCache.hitCount),
            ("quire_page_cache_misses_total", "counter", "Stateless pages assembled.", pageCache.missCount),
        ]
        var text = ""
        for sample in samples {
            text += "# HELP \(sample.name) \(sample.help)\n# TYPE \(sample.name) \(sample.type)\n"
            text += "\(sample.name) \(sample.value)\n"
        }
        return .response(
            Response(status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], text: text))
    }
}
