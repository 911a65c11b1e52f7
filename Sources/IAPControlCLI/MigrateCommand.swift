import ArgumentParser
import Foundation
import IAPCLI
import IAPSettings
import IAPStages
import IAPOperations
import RedisClient

/// `iapctl migrate`: copy a one-bucket ledger (a single server or Sentinel) into the bucket
/// layout of another Redis (a cluster), then verify it. The source is only read.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy a single-server (or Sentinel) ledger into the bucket layout of a Redis Cluster, then verify it.",
        discussion: """
            Stop every intake and stage worker on both sides first (it refuses while one runs). The \
            destination is --to (else IAP_REDIS_URL) with IAP_PREFIX and IAP_BUCKETS as the fleet will \
            run there. Rerunning it is harmless until the fleet starts on the destination. Exits 1 \
            unless every family verified. See docs/operations/migration.md.
            """)
    @Option(help: "The source: redis://… or redis-sentinel://… (read only).") var from: String
    @Option(help: "What the source's keys start with.") var fromPrefix = "iap"
    @Option(help: "The destination (default: IAP_REDIS_URL), e.g. redis-cluster://host:7000,host:7001.") var to: String?
    @OptionGroup var redis: RedisOptions
    @OptionGroup var lease: LeaseOptions
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard !fromPrefix.isEmpty, !fromPrefix.contains(" ") else { throw ValidationError("--from-prefix must be a prefix without spaces") }
        if let source = try? RedisConfiguration(url: from), case .cluster = source.endpoint {
            throw ValidationError("--from must be a single server or Sentinel: a cluster's ledger is in buckets already")
        }
    }

    func run() async throws {
        var flags: [String: String] = [:]
        for group in settingsGroups(of: self) {
            for case let (setting, value?) in group.flags { flags[setting.variable] = value }
        }
        if let to { flags[Settings.redisURL.variable] = to }
        let configuration: PipelineConfiguration
        do {
            configuration = try PipelineConfiguration(environment: ProcessInfo.processInfo.environment, flags: flags)
        } catch {
            failConfiguration(error)
        }
        let sourceConfiguration: RedisConfiguration
        do { sourceConfiguration = try RedisConfiguration(url: from) } catch { throw ValidationError("--from: \(error)") }
        let source = RedisClient(configuration: sourceConfiguration, poolSize: 2)
        let destination = configuration.redis.client()
        let migration = LedgerMigration(
            source: source, sourcePrefix: fromPrefix, destination: destination, keys: configuration.keys, lease: configuration.worker.lease)
        let started = ContinuousClock.now
        let outcome: Result<MigrationReport, any Error>
        do { outcome = .success(try await migration.run()) } catch { outcome = .failure(error) }
        await source.close()
        await destination.close()
        let report: MigrationReport
        switch outcome {
        case .success(let done): report = done
        case .failure(let failure as LedgerMigration.Failure):
            FileHandle.standardError.write(Data("iapctl migrate: \(failure)\n".utf8))
            throw ExitCode(2)
        case .failure(let error): throw error
        }
        let took = ContinuousClock.now - started
        if json {
            printJSON(report)
        } else {
            print("migrated \(fromPrefix) → \(configuration.redis.prefix) over \(report.buckets) buckets in \(took.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
            print("family".padding(toLength: 20, withPad: " ", startingAt: 0) + "source".leftPadded(10) + "moved".leftPadded(10)
                + "found".leftPadded(10) + "differ".leftPadded(8) + "  ok")
            for family in report.families {
                print(family.name.padding(toLength: 20, withPad: " ", startingAt: 0) + "\(family.source)".leftPadded(10)
                    + "\(family.moved)".leftPadded(10) + "\(family.found)".leftPadded(10) + "\(family.different)".leftPadded(8)
                    + (family.verified ? "  yes" : "  NO") + (family.note.map { "  (\($0))" } ?? ""))
            }
            for name in report.unknownNames { print("unknown key left in the source: \(name)") }
            print("renamed notification tickets: \(report.renamedTickets); transient keys left: \(report.skippedKeys); unknown keys: \(report.unknownKeys)")
            print(report.verified ? "verified" : "NOT verified")
        }
        if !report.verified { throw ExitCode(1) }
    }
}
