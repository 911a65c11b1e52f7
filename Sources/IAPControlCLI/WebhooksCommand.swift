import ArgumentParser
import Foundation
import IAPCLI
import IAPOperations
import PipelineCore
import PlainJSON

/// `iapctl webhooks`: where each destination's delivery stands, every bucket summed.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Each webhook destination: events not yet routed, users waiting, how far it has routed.",
        discussion: """
            From the fulfilment stream's consumer groups (XINFO GROUPS: lag, the last entry routed) and each destination's busy \
            set (users with a delivery job); a destination removed from IAP_WEBHOOKS_FILE but still registered shows here until \
            it is dropped (docs/webhooks.md).
            """)
    @OptionGroup var redis: RedisOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let destinations = try await withStore(configuration) { try await $0.webhookDestinationStatus() }
        if json { return print(JSONValue.array(destinations.map(\.json)).canonicalText) }
        print(Self.table(destinations, now: currentTimeMs()))
    }

    static func table(_ destinations: [WebhookDestinationStatus], now: Int64) -> String {
        guard !destinations.isEmpty else { return "no webhook destination: nothing routes the fulfilment stream" }
        let head = ["destination", "group", "not routed", "users waiting", "last routed", "registered"]
        let rows = destinations.map { status in
            [status.destination, status.group, status.lag.map(String.init) ?? "?", String(status.usersWaiting),
             status.lastRoutedAt.map { String(format: "%.0f s ago", Double(max(now - $0, 0)) / 1000) } ?? "never",
             status.destination == RedisKeys.defaultWebhookDestination ? "-" : (status.registered ? "yes" : "no")]
        }
        let widths = head.indices.map { column in ([head] + rows).map { $0[column].count }.max() ?? 0 }
        return ([head] + rows).map { cells in
            cells.enumerated().map { index, cell in cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
