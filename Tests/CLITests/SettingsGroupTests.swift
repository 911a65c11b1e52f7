import ArgumentParser
import IAPCLI
import IAPSettings
import Testing

/// A group's flags are read off its options, each named after its flag: every option of every
/// group is one setting's, and a value given to a flag is that setting's value.
@Suite struct SettingsGroupTests {
    static let groups: [any SettingsGroup.Type] = [
        RedisOptions.self, ReplicationOptions.self, TicketOptions.self, LeaseOptions.self, IntakeOptions.self, WorkerOptions.self,
        RetryOptions.self, AppleBreakerOptions.self, RetentionOptions.self, CatalogOptions.self, PolicyOptions.self, AdoptionOptions.self,
        RecheckOptions.self, WebhookOptions.self, AppleAccountOptions.self, AppOptions.self, AppAppleIDOptions.self,
        NotificationSweepOptions.self, ReceiptAPIOptions.self, ServerAPIKeyOptions.self, ServerAPIClientOptions.self,
        ConsumptionOptions.self, AccountTokenOptions.self, AppsFileOptions.self, OfferKeyOptions.self, ConsoleOptions.self, LocalConsoleOptions.self,
    ]

    @Test(arguments: groups.indices)
    func everyOptionIsOneSettingsAndCarriesItsValue(_ index: Int) throws {
        let group = Self.groups[index]
        let empty = try group.parse([])
        #expect(empty.optionCount > 0)
        #expect(empty.flags.count == empty.optionCount, "\(group): an option not named after its flag")
        #expect(empty.flags.values.allSatisfy { $0 == nil })
        let settings = Array(empty.flags.keys)
        let given = try group.parse(settings.flatMap { ["--\($0.flag)", "value of \($0.variable)"] })
        for setting in settings {
            #expect(given.flags[setting] == "value of \(setting.variable)", "\(group): \(setting.variable)")
        }
    }
}
