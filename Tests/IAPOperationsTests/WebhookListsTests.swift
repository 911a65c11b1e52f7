import IAPOperations
import Testing

/// Migration finds each webhook group's undelivered entries in that destination's lists.
struct WebhookListsTests {
    @Test func eachWebhookGroupNamesItsDestinationsLists() {
        #expect(LedgerMigration.webhookLists(ofGroup: "webhook") == "webhook:events:")
        #expect(LedgerMigration.webhookLists(ofGroup: "webhook:analytics") == "webhook:to:analytics:events:")
        #expect(LedgerMigration.webhookLists(ofGroup: "backend") == nil)
    }
}
