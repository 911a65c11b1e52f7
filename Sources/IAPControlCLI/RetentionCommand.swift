import AppStoreServerAPI
import ArgumentParser
import Foundation
import IAPCLI
import IAPOperations
import IAPSettings
import IAPStages
import PlainJSON

/// `iapctl apple retention …`: Apple's Retention Messaging API set up for the real-time endpoint
/// (`POST /v1/apple/retention`): its URL, the messages and images rules name, default messages,
/// and the performance test that must pass before production takes the URL.
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention", abstract: "Set up Apple's Retention Messaging for the real-time endpoint (needs the API keys).",
        discussion: """
            In order: upload the messages (and images) your retention rules name, set default messages, point the \
            sandbox's real-time URL at <intake>/v1/apple/retention, run the performance test against a sandbox \
            subscription, then set production's URL (Apple takes it only after a passing test). Exit 0 done, 1 Apple \
            refused (or the test failed), 2 Apple or Redis could not be asked.
            """,
        subcommands: [URLCommand.self, Message.self, Image.self, DefaultMessage.self, PerformanceTest.self])

    /// What every retention call needs: Redis (the fleet's budget), the key, the app and where Apple is.
    struct Common: ParsableArguments {
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @Option(help: "With IAP_APPS_FILE: the app whose key asks (default the first).") var bundleId: String?
        @Flag(help: "Print Apple's JSON.") var json = false
    }

    /// Runs `call` with the app's client, prints the outcome and exits as the command says.
    static func run(
        _ common: Common, of command: some ParsableCommand, summary: @Sendable (JSONValue) -> [String] = { _ in ["done"] },
        _ call: @Sendable @escaping (RetentionSetup) async -> Result<JSONValue, RetentionSetup.Failure>,
        succeeded: @Sendable (JSONValue) -> Bool = { _ in true }
    ) async throws {
        let configuration = loadConfiguration(of: command)
        guard configuration.isServerAPIConfigured else {
            throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
        }
        let bundle = common.bundleId
        let outcome = try await withStore(configuration) { store in
            let clients: [(bundleID: String, client: ServerAPIClient)]
            do { clients = try configuration.serverAPIClients(store: store, logger: bootstrapLogging(label: "iapctl")) } catch let error as ConfigurationError {
                failConfiguration(error)
            }
            guard let chosen = bundle.map({ name in clients.first { $0.bundleID == name } }) ?? clients.first else {
                FileHandle.standardError.write(Data("no App Store Server API key for \(bundle ?? "this app")\n".utf8))
                throw ExitCode(2)
            }
            let result = await call(RetentionSetup(client: chosen.client))
            for client in clients { await client.client.shutdown() }
            return result
        }
        switch outcome {
        case .success(let answer):
            if common.json { print(answer.canonicalText) } else { summary(answer).forEach { print($0) } }
            if !succeeded(answer) { throw ExitCode(1) }
        case .failure(let failure):
            FileHandle.standardError.write(Data("\(failure.message)\n".utf8))
            throw ExitCode(failure.refused ? 1 : 2)
        }
    }

    static func environment(_ name: String) throws -> ServerAPIEnvironment {
        switch name {
        case "production": .production
        case "sandbox": .sandbox
        default: throw ValidationError("--environment: production or sandbox")
        }
    }

    static func uuid(_ text: String?, _ option: String) throws -> String {
        guard let text else { return UUID().uuidString.lowercased() }
        guard let id = UUID(uuidString: text) else { throw ValidationError("\(option): a UUID") }
        return id.uuidString.lowercased()
    }

    /// `iapctl apple retention url [--set URL | --delete]`: the environment's real-time URL.
    struct URLCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url", abstract: "Show, set or delete the real-time URL Apple sends retention requests to.")
        @OptionGroup var common: Common
        @Option(help: "production or sandbox.") var environment = "sandbox"
        @Option(help: "The URL to set: https://<your intake>/v1/apple/retention.") var set: String?
        @Flag(help: "Delete the URL (Apple then shows default messages only).") var delete = false

        func validate() throws {
            _ = try RetentionCommand.environment(environment)
            if set != nil && delete { throw ValidationError("give --set or --delete, not both") }
            if let set, !(set.hasPrefix("https://") || set.hasPrefix("http://127.0.0.1")) || set.utf8.count > 256 {
                throw ValidationError("--set: an https URL of at most 256 characters")
            }
        }

        func run() async throws {
            let (environment, set, delete) = (try RetentionCommand.environment(environment), set, delete)
            try await RetentionCommand.run(common, of: self, summary: { answer in
                [set.map { "real-time URL set: \($0)" } ?? (delete ? "real-time URL deleted" : "real-time URL: \(answer["realtimeURL"]?.string ?? "none")")]
            }) { setup in
                if let set { return RetentionSetup.outcome(await setup.client.setRealtimeURL(set, environment: environment)) }
                if delete { return RetentionSetup.outcome(await setup.client.deleteRealtimeURL(environment: environment)) }
                return RetentionSetup.outcome(await setup.client.realtimeURL(environment: environment))
            }
        }
    }

    /// `iapctl apple retention message (--list | --add --header H --body B | --delete --id ID)`.
    struct Message: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "message", abstract: "List, upload or delete retention messages (a rule's message is one's id).")
        @OptionGroup var common: Common
        @Option(help: "production or sandbox.") var environment = "sandbox"
        @Flag(help: "Upload a message (--header, --body; --id, else a new UUID).") var add = false
        @Flag(help: "Delete the message --id.") var delete = false
        @Option(help: "The message's UUID.") var id: String?
        @Option(help: "Its header, at most 66 characters.") var header: String?
        @Option(help: "Its body, at most 144 characters.") var body: String?
        @Option(help: "An uploaded image's UUID to show with it.") var imageId: String?
        @Option(help: "The image's alternative text, at most 150 characters.") var altText: String?

        func validate() throws {
            _ = try RetentionCommand.environment(environment)
            guard !(add && delete) else { throw ValidationError("give --add or --delete, not both") }
            if add {
                guard let header, (1...66).contains(header.count) else { throw ValidationError("--header: 1 to 66 characters") }
                guard let body, (1...144).contains(body.count) else { throw ValidationError("--body: 1 to 144 characters") }
                if imageId != nil { guard let altText, (1...150).contains(altText.count) else { throw ValidationError("--alt-text: 1 to 150 characters") } }
            }
            if delete, id == nil { throw ValidationError("--delete needs --id") }
            _ = try RetentionCommand.uuid(id, "--id")
            if let imageId { _ = try RetentionCommand.uuid(imageId, "--image-id") }
        }

        func run() async throws {
            let environment = try RetentionCommand.environment(environment)
            let id = try RetentionCommand.uuid(id, "--id")
            let image = try imageId.map { (try RetentionCommand.uuid($0, "--image-id"), altText ?? "") }
            let (add, delete, header, body) = (add, delete, header ?? "", body ?? "")
            try await RetentionCommand.run(common, of: self, summary: { answer in
                if add { return ["message uploaded: \(id)"] }
                if delete { return ["message deleted: \(id)"] }
                return (answer["messageIdentifiers"]?.array ?? []).map {
                    "\($0["messageIdentifier"]?.string ?? "?")  \($0["messageState"]?.string ?? "?")"
                }
            }) { setup in
                if add {
                    return RetentionSetup.outcome(await setup.client.uploadMessage(id, header: header, body: body, image: image, environment: environment))
                }
                if delete { return RetentionSetup.outcome(await setup.client.deleteMessage(id, environment: environment)) }
                return RetentionSetup.outcome(await setup.client.messageList(environment: environment))
            }
        }
    }

    /// `iapctl apple retention image --file F.png [--id ID]`: uploads a message's image.
    struct Image: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "image", abstract: "Upload an image (PNG) for retention messages.")
        @OptionGroup var common: Common
        @Option(help: "production or sandbox.") var environment = "sandbox"
        @Option(help: "The PNG file.") var file: String
        @Option(help: "The image's UUID (default a new one).") var id: String?

        func run() async throws {
            let environment = try RetentionCommand.environment(environment)
            let id = try RetentionCommand.uuid(id, "--id")
            guard let png = FileManager.default.contents(atPath: file), png.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                throw ValidationError("--file: \(file) is not a PNG")
            }
            try await RetentionCommand.run(common, of: self, summary: { _ in ["image uploaded: \(id)"] }) { setup in
                RetentionSetup.outcome(await setup.client.uploadImage(id, png: Array(png), environment: environment))
            }
        }
    }

    /// `iapctl apple retention default --product P --locale L --message ID`.
    struct DefaultMessage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "default", abstract: "Set the message Apple shows for a product and locale when no real-time answer comes.")
        @OptionGroup var common: Common
        @Option(help: "production or sandbox.") var environment = "sandbox"
        @Option(help: "The auto-renewable product.") var product: String
        @Option(help: "The locale, such as en-US.") var locale: String
        @Option(help: "The message's UUID.") var message: String

        func run() async throws {
            let environment = try RetentionCommand.environment(environment)
            let message = try RetentionCommand.uuid(message, "--message")
            let (product, locale) = (product, locale)
            try await RetentionCommand.run(common, of: self, summary: { _ in ["default message of \(product) in \(locale): \(message)"] }) { setup in
                RetentionSetup.outcome(await setup.client.configureDefaultMessage(
                    productID: product, locale: locale, messageID: message, environment: environment))
            }
        }
    }

    /// `iapctl apple retention performance-test --original-transaction-id ID [--wait S]`.
    struct PerformanceTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "performance-test",
            abstract: "Run Apple's performance test against the sandbox real-time URL and print its result (exit 0 on PASS).")
        @OptionGroup var common: Common
        @Option(help: "A sandbox subscription's original transaction id: Apple's requests name it.") var originalTransactionId: String
        @Option(help: "Seconds to wait for the result (1 to 600).") var wait = 120

        func validate() throws {
            guard (1...600).contains(wait) else { throw ValidationError("--wait: 1 to 600 seconds") }
        }

        func run() async throws {
            let (original, wait) = (originalTransactionId, wait)
            try await RetentionCommand.run(common, of: self, summary: { result in
                let times = result["responseTimes"]
                return [
                    "performance test \(result["requestId"]?.string ?? "?") against \(result["target"]?.string ?? "?"): \(result["result"]?.string ?? "?")",
                    "  success rate  \(result["successRate"]?.lenientString ?? "?") %, pending \(result["numPending"]?.lenientString ?? "?")",
                    "  response ms   average \(times?["average"]?.lenientString ?? "?"), p50 \(times?["p50"]?.lenientString ?? "?"), "
                        + "p90 \(times?["p90"]?.lenientString ?? "?"), p99 \(times?["p99"]?.lenientString ?? "?")",
                ]
            }, { setup in await setup.performanceTest(originalTransactionID: original, wait: .seconds(wait)) },
            succeeded: { $0["result"]?.string == "PASS" })
        }
    }
}
