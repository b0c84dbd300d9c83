import QuireSources

/// The figures of each source's follower (API.md §2b), written in Prometheus' text format after the registry's
/// metrics: read from the followers' own counters at each scrape, so following costs no metric call per row.
enum SourceMetrics {
    static func write(_ followers: [SourceFollower], into text: inout [UInt8]) {
        guard !followers.isEmpty else { return }
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name){\(sample.labels)} \(sample.value)") }
        }
        let each = followers.map { (label: "source=\"\($0.source.name)\"", statistics: $0.statistics) }
        family(
            "quire_source_up", "gauge", "1 while the source is copied or followed, 0 while it reconnects or stopped.",
            each.map { ($0.label, $0.statistics.isUp ? "1" : "0") })
        family(
            "quire_source_standby", "gauge",
            "1 while another instance of the cluster follows the source and this one waits to take over.",
            each.map { ($0.label, $0.statistics.isStandby ? "1" : "0") })
        family(
            "quire_source_syncing", "gauge", "1 while the source copies its table (its lists answer 503).",
            each.map { ($0.label, $0.statistics.isSyncing ? "1" : "0") })
        family(
            "quire_source_lag_bytes", "gauge", "The database's end of log minus what the source has applied.",
            each.map { ($0.label, "\($0.statistics.lagBytes)") })
        family(
            "quire_source_retained_wal_bytes", "gauge", "The log the source's replication slot keeps on the database.",
            each.map { ($0.label, "\($0.statistics.retainedWALBytes)") })
        family(
            "quire_source_transactions_total", "counter", "Transactions of the source's table applied.",
            each.map { ($0.label, "\($0.statistics.transactionCount)") })
        family(
            "quire_source_commits_total", "counter",
            "Commits of Quire's store that applied the source's transactions (several are committed together).",
            each.map { ($0.label, "\($0.statistics.commitCount)") })
        family(
            "quire_source_rows_total", "counter", "Row changes applied, by op.",
            each.flatMap { source in
                source.statistics.rows.map { ("\(source.label),op=\"\($0.op)\"", "\($0.count)") }
            })
        family(
            "quire_source_rows_skipped_total", "counter", "Rows left out of the lists (an invalid list name or id).",
            each.map { ($0.label, "\($0.statistics.skippedCount)") })
        let histogram = "quire_source_commit_to_apply_seconds"
        lines.append("# HELP \(histogram) From a transaction's commit on the database to its versions' publication.")
        lines.append("# TYPE \(histogram) histogram")
        for source in each {
            let (cumulative, sum) = source.statistics.commitToApply
            for (bound, count) in zip(SourceStatistics.bounds.map { "\($0)" } + ["+Inf"], cumulative) {
                lines.append("\(histogram)_bucket{\(source.label),le=\"\(bound)\"} \(count)")
            }
            lines.append("\(histogram)_sum{\(source.label)} \(sum)")
            lines.append("\(histogram)_count{\(source.label)} \(cumulative.last ?? 0)")
        }
        text.append(contentsOf: (lines.joined(separator: "\n") + "\n").utf8)
    }
}
