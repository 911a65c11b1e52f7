import ArgumentParser
import Foundation
import Hummingbird
import IAPCLI
import IAPConsole
import IAPOperations
import IAPSettings
import IAPStages
import PipelineCore
import RedisClient
import ServiceLifecycle

/// `iap-console`: the console's pages on `IAP_CONSOLE_HOST:IAP_CONSOLE_PORT` over the pipeline's Redis.
public struct ConsoleCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-console", abstract: "The console: a purchase's whole story in a browser, for support and on-call.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var console: ConsoleOptions
    @OptionGroup var recheck: RecheckOptions
    @OptionGroup var tickets: TicketOptions
    // Support's look-up at Apple: the apps, their Server API key and clients, the catalog.
    @OptionGroup var apps: AppOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var key: ServerAPIKeyOptions
    @OptionGroup var client: ServerAPIClientOptions
    @OptionGroup var catalog: CatalogOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(redis, lease, console, recheck, tickets, apps, appsFile, key, client, catalog)
        let settings = configuration.console
        do {
            try settings.checkExposure()
        } catch {
            failConfiguration(error)
        }
        let logger = bootstrapLogging(label: "iap-console")
        let users: ConsoleUsers
        if let file = settings.usersFile {
            do {
                users = try ConsoleUsers(file: file)
            } catch {
                FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
                Foundation.exit(2)
            }
            logger.info("console users", metadata: ["users": "\(users.names.count)"])
        } else {
            // One operator on loopback: a password made now, shown once on the terminal (not in the logs).
            let token = ConsoleUsers.makeToken()
            users = ConsoleUsers(localToken: token)
            FileHandle.standardError.write(Data("iap-console: sign in as 'local' with password \(token) (IAP_CONSOLE_USERS_FILE is not set)\n".utf8))
        }
        let redisClient = RedisClient(configuration: configuration.redis, poolSize: 4)
        let store = PipelineStore(redis: redisClient, keys: configuration.keys, recheck: configuration.recheck)
        let support: SupportLookup?
        do {
            support = try SupportLookup.make(configuration, store: store, logger: logger)
        } catch {
            failConfiguration(error)
        }
        if support == nil { logger.info("no Server API key (IAP_APPLE_API_*): support's look-up at Apple is off") }
        let sessions = ConsoleSessions(redis: redisClient, keys: configuration.keys, lifetime: settings.sessionLifetime)
        let host = settings.host
        let console = try ConsoleApplication(store: store, sessions: sessions, users: users, lease: configuration.worker.lease, ticketTTL: configuration.ticketTTL,
            origins: settings.origins, secureCookie: settings.secureCookie, support: support)
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
}

/// `iap-console`'s main.
public enum ConsoleEntry {
    public static func main() async { await ProcessEntry.serve(ConsoleCommand.self) }
}
