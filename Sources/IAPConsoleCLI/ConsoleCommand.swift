import ArgumentParser
import Foundation
import Hummingbird
import IAPCLI
import IAPConsole
import IAPOperations
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import RedisClient
import ServiceLifecycle

/// `iap-console`: the console's pages on `IAP_CONSOLE_HOST:IAP_CONSOLE_PORT` over the pipeline's Redis.
package struct ConsoleCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-console", abstract: "The console: a purchase's whole story in a browser, for support and on-call.")
    @OptionGroup var server: ConsoleServerOptions
    @OptionGroup var console: ConsoleOptions
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        do {
            try configuration.console.checkExposure()
        } catch {
            failConfiguration(error)
        }
        try await ConsoleServer.serve(configuration, label: "iap-console")
    }
}

/// `iapctl console`: the console for one operator, on loopback only, whatever `IAP_CONSOLE_HOST`
/// and `IAP_CONSOLE_USERS_FILE` say: a user `local` (admin) whose password is printed at start.
package struct LocalConsoleCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "console", abstract: "The console in a browser, for you alone: on 127.0.0.1, with a password printed now.")
    @OptionGroup var server: ConsoleServerOptions
    @OptionGroup var console: LocalConsoleOptions
    package init() {}

    package func run() async throws {
        var configuration = loadConfiguration(of: self)
        configuration.console.host = "127.0.0.1"
        configuration.console.usersFile = nil
        configuration.console.origin = nil
        try await ConsoleServer.serve(configuration, label: "iapctl-console")
    }
}

/// What both console commands read besides where they listen: Redis, the lease (live workers),
/// re-checks and tickets (the actions), and for support's look-up at Apple the apps, their Server
/// API key and clients, and the catalog.
package struct ConsoleServerOptions: ParsableArguments {
    @OptionGroup var redis: RedisOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var recheck: RecheckOptions
    @OptionGroup var tickets: TicketOptions
    @OptionGroup var apps: AppOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var key: ServerAPIKeyOptions
    @OptionGroup var client: ServerAPIClientOptions
    @OptionGroup var catalog: CatalogOptions
    package init() {}
}

/// The console's server, as `iap-console` and `iapctl console` run it.
enum ConsoleServer {
    static func serve(_ configuration: PipelineConfiguration, label: String) async throws {
        let settings = configuration.console
        let logger = bootstrapLogging(label: label)
        let users = signIns(settings, logger: logger)
        let redisClient = configuration.redis.client(connections: 4)
        let store = PipelineStore(redis: redisClient, keys: configuration.keys, recheck: configuration.recheck)
        let support: SupportLookup?
        do {
            support = try SupportLookup.make(configuration, store: store, logger: logger)
        } catch {
            failConfiguration(error)
        }
        if support == nil { logger.info("no Server API key (IAP_APPLE_API_*): support's look-up at Apple is off") }
        let catalog: ProductCatalog?
        do {
            catalog = configuration.hasCatalog ? try configuration.requireCatalog() : nil
        } catch {
            failConfiguration(error)
        }
        let sessions = ConsoleSessions(redis: redisClient, keys: configuration.keys, lifetime: settings.sessionLifetime)
        let host = settings.host
        let console = try ConsoleApplication(
            store: store, sessions: sessions, users: users, lease: configuration.worker.lease, ticketTTL: configuration.ticketTTL,
            origins: settings.origins, secureCookie: settings.secureCookie, support: support,
            // With IAP_APPS_FILE each app has its own budget at Apple, kept under its bundle id.
            apps: configuration.appsFile == nil ? [nil] : support?.clients.map(\.configuration.bundleID) ?? [nil],
            dailyLimits: catalog?.dailyLimits ?? [:], catalog: catalog)
        let app = Application(
            router: console.router(), configuration: .init(address: .hostname(host, port: settings.port), serverName: "iap-console"),
            onServerRunning: { channel in logger.info("console listening", metadata: ["host": "\(host)", "port": "\(channel.localAddress?.port ?? 0)"]) },
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: ClosingService {
            await support?.shutdown()
            await redisClient.close()
        })]
        if settings.usersFile != nil {
            services.append(.init(service: await HangupReloader("console users", logger: logger) {
                try users.reload()
                return "\(users.names.count) users"
            }))
        }
        services.append(.init(service: app))
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// Who may sign in: the users file's users, or without one a single operator on loopback
    /// with a password made now, shown once on the terminal (not in the logs).
    static func signIns(_ settings: ConsoleSettings, logger: Logger) -> ConsoleUsers {
        guard let file = settings.usersFile else {
            let token = ConsoleUsers.makeToken()
            FileHandle.standardError.write(Data("iap-console: sign in as 'local' with password \(token) (IAP_CONSOLE_USERS_FILE is not set)\n".utf8))
            return ConsoleUsers(localToken: token)
        }
        do {
            let users = try ConsoleUsers(file: file)
            logger.info("console users", metadata: ["users": "\(users.names.count)"])
            return users
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            Foundation.exit(2)
        }
    }
}

/// `iap-console`'s main.
package enum ConsoleEntry {
    package static func main() async { await ProcessEntry.serve(ConsoleCommand.self) }
}
