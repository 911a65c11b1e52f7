import ArgumentParser
import Foundation
import IAPCLI
import IAPPipeline

/// `iapctl apple …`: the App Store Server API for an operator.
struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple", abstract: "Ask Apple's App Store Server API (needs the API keys).", subcommands: [TestNotification.self])

    /// `iapctl apple test-notification`: Request a Test Notification, then its status until Apple
    /// reports the attempt; exit 0 only when the notification arrived and the intake stored it.
    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Have Apple send a TEST notification and check that the intake stored it (exit 0 only then).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @Option(help: "production or sandbox.") var environment = "production"
        @Option(help: "Seconds to wait for Apple to report its attempt (1 to 600).") var wait = 60
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard ["production", "sandbox"].contains(environment) else { throw ValidationError("--environment: production or sandbox") }
            guard (1...600).contains(wait) else { throw ValidationError("--wait: 1 to 600 seconds") }
        }

        func run() async throws {
            let configuration = loadConfiguration(redis, app, key, client)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            let (environment, wait) = (environment, wait)
            let outcome = try await withStore(configuration) { store in
                let probe: TestNotificationProbe?
                do { probe = try TestNotificationProbe.make(configuration, store: store) } catch let error as ConfigurationError { failConfiguration(error) }
                guard let probe else { throw ExitCode(1) }
                return try await probe.runOnce(environment: environment, wait: .seconds(wait))
            }
            if json {
                printJSON(outcome)
            } else {
                print("test notification \(outcome.token) (\(outcome.environment)): \(outcome.result)")
                if let uuid = outcome.notificationUUID { print("  notificationUUID  \(uuid)") }
                for attempt in outcome.attempts {
                    print("  attempt           \(attempt.sendAttemptResult ?? "?") at \(attempt.attemptDate.map(String.init) ?? "?")")
                }
                if let ticket = outcome.ticket { print("  stored as ticket  \(ticket) (\(outcome.ticketStatus ?? "gone"))") }
            }
            if !outcome.arrived { throw ExitCode(1) }
        }
    }
}
