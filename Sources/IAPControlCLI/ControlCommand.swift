import AppleReceipt
import ArgumentParser
import IAPCLI
import IAPConsoleCLI
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient

/// `iapctl`: look at the pipeline and handle dead letters.
package struct ControlCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iapctl", abstract: "Inspect the IAP pipeline and manage its dead letters.",
        subcommands: [Stats.self, ShowTicket.self, Dead.self, HeldCommand.self, LocalConsoleCommand.self, GrantCommand.self, RevokeCommand.self, UserCommand.self,
            RecheckCommand.self, SettingsCommand.self, MigrateCommand.self, AppleCommand.self, LookupCommand.self, AdoptCommand.self,
            ReportCommand.self, ExportCommand.self, WebhooksCommand.self,
        ])
    package init() {}

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats", abstract: "Queue depths, oldest job, in-flight, retry, dead, held, live workers.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var lease: LeaseOptions
        @Flag(help: "Print JSON (with --watch: one line a second).") var json = false
        @Flag(help: "Refresh every second, with fulfilments a second, until Ctrl-C.") var watch = false
        @Flag(help: "The last hour instead, a line a minute (what the console's overview charts; the intakes sample it).")
        var lastHour = false

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            if lastHour {
                let history = try await withStore(configuration) { try await $0.queueHistory() }
                return print(json ? QueueHistoryText.json(history).canonicalText : QueueHistoryText.table(history))
            }
            let (json, watch, lease) = (json, watch, configuration.worker.lease)
            try await withStore(configuration) { store in
                var previous: (fulfilment: Int, at: ContinuousClock.Instant)?
                repeat {
                    let stats = try await store.stats(lease: lease)
                    let now = ContinuousClock.now
                    let rate = previous.map { Double(stats.fulfilment - $0.fulfilment) / max((now - $0.at) / .seconds(1), 0.001) }
                    previous = (stats.fulfilment, now)
                    if json {
                        Self.printLine(stats, rate: rate)
                    } else {
                        if watch { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                        Self.printTable(stats, rate: rate)
                    }
                    // Through a pipe stdout is block-buffered: each refresh must leave now.
                    fflush(nil)
                    if watch { try await Task.sleep(for: .seconds(1)) }
                } while watch
            }
        }

        static func printTable(_ stats: PipelineStats, rate: Double?) {
            print("stage   queued  oldest s  in-flight  live-workers")
            for stage in Stage.allCases.map(\.rawValue) {
                let age = stats.oldestAgeMs[stage].map { String(format: "%.1f", Double($0) / 1000) } ?? "-"
                print(
                    stage.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + String(stats.queues[stage] ?? 0).leftPadded(6) + age.leftPadded(10)
                        + String(stats.inflight[stage] ?? 0).leftPadded(11) + String(stats.liveWorkers[stage] ?? 0).leftPadded(14))
            }
            print("retry \(stats.retry) (due \(stats.retryDue))  dead \(stats.dead)  held \(stats.held)  fulfilments \(stats.fulfilment)"
                + (rate.map { String(format: " (%.1f/s)", $0) } ?? ""))
            print("re-checks \(stats.rechecks) (due within the hour \(stats.rechecksDueNextHour))")
            for (service, breaker) in stats.appleBreakers.sorted(by: { $0.key < $1.key }) {
                if let since = breaker.openSinceMs {
                    let open = String(format: "%.0f", Double(currentTimeMs() - since) / 1000)
                    print("apple \(service): BREAKER OPEN for \(open) s (\(breaker.failures) failures, last \(breaker.lastFailure ?? "-")): "
                        + "its jobs wait in the retry set, one probe an interval")
                } else {
                    print("apple \(service): answering (\(breaker.failures) failures since its last answer)")
                }
            }
        }

        /// One JSON line: the stats and, from the second line on, fulfilments a second.
        static func printLine(_ stats: PipelineStats, rate: Double?) {
            struct Line: Encodable {
                var stats: PipelineStats
                var fulfilmentsPerSecond: Double?

                func encode(to encoder: any Encoder) throws {
                    try stats.encode(to: encoder)
                    var container = encoder.container(keyedBy: Key.self)
                    try container.encodeIfPresent(fulfilmentsPerSecond, forKey: .rate)
                }

                enum Key: String, CodingKey { case rate = "fulfilments_per_second" }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(Line(stats: stats, fulfilmentsPerSecond: rate))) ?? Data(), as: UTF8.self))
        }
    }

    struct ShowTicket: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ticket", abstract: "Print a ticket as JSON.")
        @OptionGroup var redis: RedisOptions
        @Argument var id: String

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            guard let ticket = try await withStore(configuration, { try await $0.ticket(id) }) else {
                throw CleanExit.message("no such ticket: \(id)")
            }
            print(String(decoding: ticket.encoded(), as: UTF8.self))
        }
    }

    struct Dead: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dead", abstract: "List, replay or purge dead letters.", subcommands: [List.self, Replay.self, Purge.self])

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "Newest dead letters first.")
            @OptionGroup var redis: RedisOptions
            @Option(help: "How many.") var limit = 20
            @Option(help: "Only those dead for this reason (retries_exhausted, unknown_product, …).") var reason: String?
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let configuration = loadConfiguration(of: self)
                let entries = try await withStore(configuration) { try await $0.deadLetters(limit: reason == nil ? limit : Int(Int32.max)) }
                let letters = entries.map { (try? DeadLetter.decode($0)) ?? DeadLetter(
                    job: $0, stage: "?", reason: ReasonCode.unreadableDeadLetter, error: nil, attempts: 0, at: 0, ticket: nil) }
                    .filter { reason == nil || $0.reason == reason }.prefix(max(limit, 0))
                if json { return printJSON(Array(letters)) }
                for letter in letters {
                    print("\(letter.ticket ?? "-")  \(letter.stage)  \(letter.reason)  attempts=\(letter.attempts)  \(letter.error ?? "")")
                }
                if letters.isEmpty { print("no dead letters") }
            }
        }

        struct Replay: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "replay", abstract: "Queue dead jobs again with attempts reset (never grants twice).")
            @OptionGroup var redis: RedisOptions
            @OptionGroup var ticketSettings: TicketOptions
            @Flag(help: "Replay every dead letter (with --reason: every one dead for it).") var all = false
            @Option(help: "With --all: only those dead for this reason.") var reason: String?
            @Flag(help: "Print what would be replayed; change nothing.") var dryRun = false
            @Flag(help: "Print JSON.") var json = false
            @Argument(help: "Tickets whose dead letters to replay.") var tickets: [String] = []

            func validate() throws {
                guard all != !tickets.isEmpty else { throw ValidationError("give --all or one or more tickets") }
                if reason != nil && !all { throw ValidationError("--reason goes with --all") }
            }

            struct Outcome: Encodable {
                var replayed: [String] = []
                var skipped: [String] = []
                var dryRun: Bool

                enum CodingKeys: String, CodingKey {
                    case replayed, skipped
                    case dryRun = "dry_run"
                }
            }

            func run() async throws {
                let configuration = loadConfiguration(of: self)
                let (all, reason, tickets, dryRun) = (all, reason, tickets, dryRun)
                let outcome = try await withStore(configuration) { store in
                    var outcome = Outcome(dryRun: dryRun)
                    for entry in try await store.deadLetters(limit: Int(Int32.max)) {
                        let letter = try? DeadLetter.decode(entry)
                        let chosen = all ? (reason == nil || letter?.reason == reason) : tickets.contains(letter?.ticket ?? "")
                        guard chosen else { continue }
                        let name = letter?.ticket ?? "(undecodable)"
                        if dryRun {
                            if letter.map({ (try? Job.decode($0.job)) != nil }) == true { outcome.replayed.append(name) } else { outcome.skipped.append(name) }
                            continue
                        }
                        do {
                            if try await store.replay(entry: entry, ttl: configuration.ticketTTL) { outcome.replayed.append(name) }
                        } catch let error as RedisError {
                            throw error
                        } catch {
                            outcome.skipped.append(name)
                        }
                    }
                    return outcome
                }
                if json { return printJSON(outcome) }
                let names = dryRun && !outcome.replayed.isEmpty ? ": " + outcome.replayed.joined(separator: ", ") : ""
                print("\(dryRun ? "would replay" : "replayed") \(outcome.replayed.count)\(names)")
                if !outcome.skipped.isEmpty {
                    print("not replayable (no job inside; see 'dead list'): \(outcome.skipped.joined(separator: ", "))")
                }
            }
        }

        struct Purge: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "purge", abstract: "Delete every dead letter.")
            @OptionGroup var redis: RedisOptions
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let configuration = loadConfiguration(of: self)
                let count = try await withStore(configuration) { try await $0.purgeDeadLetters() }
                if json { return printJSON(["purged": count]) }
                print("purged \(count)")
            }
        }
    }
}

func withStore<T: Sendable>(_ configuration: PipelineConfiguration, _ body: (PipelineStore) async throws -> T) async throws -> T {
    let redis = configuration.redis.client()
    do {
        let result = try await body(PipelineStore(redis: redis, keys: configuration.keys, recheck: configuration.recheck))
        await redis.close()
        return result
    } catch {
        await redis.close()
        throw error
    }
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
    print(String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self))
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
