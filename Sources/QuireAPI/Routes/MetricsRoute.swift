import QuireHTTP

/// `GET /metrics`: the Prometheus text exposition format (version 0.0.4).
extension APIContext {
    func metrics() -> Reply {
        .response(
            Response(
                status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: serviceMetrics.scrape(self)))
    }
}
