import Foundation
import PipelineCore
import PlainJSON

/// `iapctl stats --last-hour`: the queues' last hour a line a minute, as the console's overview
/// charts it (jobs waiting, events a minute, retries, dead letters, held purchases).
enum QueueHistoryText {
    static func table(_ history: QueueHistory) -> String {
        guard !history.samples.isEmpty else { return "no samples yet: the intakes keep one a minute" }
        var lines = ["minute (UTC)       queued  events/min  retry  dead  held"]
        for (sample, events) in zip(history.samples, history.eventsPerMinute) {
            lines.append(
                Date(timeIntervalSince1970: Double(sample.at) / 1000).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)).prefix(16)
                    .padding(toLength: 16, withPad: " ", startingAt: 0)
                    + String(sample.totalQueued).leftPadded(9) + (events.map(String.init) ?? "-").leftPadded(12)
                    + String(sample.retry).leftPadded(7) + String(sample.dead).leftPadded(6) + String(sample.held).leftPadded(6))
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ history: QueueHistory) -> JSONValue {
        .array(zip(history.samples, history.eventsPerMinute).map { sample, events in
            .members([
                "at": .int(sample.at), "queued": .object(sample.queued.mapValues { .int($0) }), "retry": .int(sample.retry),
                "dead": .int(sample.dead), "held": .int(sample.held), "events": .int(sample.events),
                "events_per_minute": events.map { .int($0) },
            ])
        })
    }
}
