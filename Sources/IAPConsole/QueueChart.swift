import PipelineCore

/// The queues' last hour as three SVG bar charts, a bar a minute, drawn on the server as
/// `BusinessChart`'s are (no script, no style attribute): jobs waiting in every stage, events
/// written a minute (the pipeline's throughput), dead letters. Each bar's `<title>` says its
/// minute and value.
enum QueueChart {
    static let width = 720.0
    static let height = 80.0

    static func charts(_ history: QueueHistory, now: Int64) -> [[String: Any]] {
        let end = now / 60_000 * 60_000
        let start = end - Int64(QueueHistory.minutes) * 60_000
        let samples = history.samples
        let series: [(key: String, title: String, points: [(Int64, Int?)])] = [
            ("queued", "jobs waiting", samples.map { ($0.at, $0.totalQueued) }),
            ("events", "events a minute", zip(samples, history.eventsPerMinute).map { ($0.at, $1) }),
            ("dead", "dead letters", samples.map { ($0.at, $0.dead) }),
        ]
        return series.map { chart($0.key, title: $0.title, points: $0.points, start: start, end: end) }
    }

    static func chart(_ key: String, title: String, points: [(Int64, Int?)], start: Int64, end: Int64) -> [String: Any] {
        let shown = points.compactMap { at, value in value.map { (at, $0) } }.filter { $0.0 >= start && $0.0 <= end }
        let peak = max(shown.map(\.1).max() ?? 0, 1)
        let slot = width / Double(QueueHistory.minutes + 1)
        let bars: [[String: Any]] = shown.map { at, value in
            let barHeight = (Double(value) / Double(peak) * (height - 10)).rounded(toPlaces: 1)
            return [
                "x": (Double((at - start) / 60_000) * slot).rounded(toPlaces: 1), "width": max(slot * 0.8, 1).rounded(toPlaces: 1),
                "y": (height - barHeight).rounded(toPlaces: 1), "height": barHeight,
                "label": "\(minute(at)) UTC: \(value) \(title)",
            ]
        }
        let latest = shown.last.map { String($0.1) } ?? "–"
        return [
            "key": key, "title": title, "width": width, "height": height, "bars": bars, "latest": latest, "peak": shown.isEmpty ? 0 : peak,
            "first": minute(start), "last": minute(end),
            "summary": "\(title), a bar a minute from \(minute(start)) to \(minute(end)) UTC: \(latest) at the last sample, at most \(shown.isEmpty ? 0 : peak)",
        ]
    }

    /// The samples as the page's JSON twin gives them to a script: each minute's figures.
    static func lastHour(_ history: QueueHistory) -> [[String: Any]] {
        zip(history.samples, history.eventsPerMinute).map { sample, events in
            var row: [String: Any] = [
                "at": ConsolePages.time(ms: sample.at), "queued": sample.totalQueued, "retry": sample.retry, "dead": sample.dead,
                "held": sample.held,
            ]
            if let events { row["events_per_minute"] = events }
            return row
        }
    }

    /// `HH:MM` of a minute, UTC.
    static func minute(_ ms: Int64) -> String {
        let minutes = (ms / 60_000) % (24 * 60)
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
