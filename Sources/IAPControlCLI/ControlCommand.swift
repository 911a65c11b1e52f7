import AppleReceipt
import ArgumentParser
import IAPCLI
import Foundation
import IAPPipeline
import RedisClient

/// `iapctl`: look at the pipeline and handle dead letters.
public struct ControlCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iapctl", abstract: "Inspect the IAP pipeline and manage its dead letters.",
        subcommands: [Stats.self, ShowTicket.self, Dead.self, HeldCommand.self])
    public init() {}

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stats", abstract: "Queue depths, in-flight, retry, dead, live workers.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var lease: LeaseOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let configuration = loadConfiguration(redis, lease)
            let stats = try await withStore(configuration) { try await $0.stats(leaseMs: configuration.leaseMs) }
            if json { return printJSON(stats) }
            print("stage   queued  in-flight  live-workers")
            for stage in Stage.allCases.map(\.rawValue) {
                print(
                    stage.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + String(stats.queues[stage] ?? 0).leftPadded(6) + String(stats.inflight[stage] ?? 0).leftPadded(11)
                        + String(stats.liveWorkers[stage] ?? 0).leftPadded(14))
            }
            print("retry \(stats.retry)  dead \(stats.dead)  held \(stats.held)  fulfilments \(stats.fulfilment)")
        }
    }

    struct ShowTicket: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ticket", abstract: "Print a ticket as JSON.")
        @OptionGroup var redis: RedisOptions
        @Argument var id: String

        func run() async throws {
            let configuration = loadConfiguration(redis)
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
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let configuration = loadConfiguration(redis)
                let entries = try await withStore(configuration) { try await $0.deadLetters(limit: limit) }
                let letters = entries.map { (try? DeadLetter.decode($0)) ?? DeadLetter(
                    job: $0, stage: "?", reason: ReasonCode.unreadableDeadLetter, error: nil, attempts: 0, at: 0, ticket: nil) }
                if json { return printJSON(letters) }
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
            @Flag(help: "Replay every dead letter.") var all = false
            @Argument(help: "Tickets whose dead letters to replay.") var tickets: [String] = []

            func validate() throws {
                guard all != !tickets.isEmpty else { throw ValidationError("give --all or one or more tickets") }
            }

            func run() async throws {
                let configuration = loadConfiguration(redis, ticketSettings)
                let (replayed, skipped) = try await withStore(configuration) { store in
                    var replayed = 0
                    var skipped: [String] = []
                    for entry in try await store.deadLetters(limit: Int(Int32.max)) {
                        let letter = try? DeadLetter.decode(entry)
                        guard all || tickets.contains(letter?.ticket ?? "") else { continue }
                        do {
                            if try await store.replay(entry: entry, ttlSeconds: configuration.ticketTTLSeconds) { replayed += 1 }
                        } catch let error as RedisError {
                            throw error
                        } catch {
                            skipped.append(letter?.ticket ?? "(undecodable)")
                        }
                    }
                    return (replayed, skipped)
                }
                print("replayed \(replayed)")
                if !skipped.isEmpty { print("not replayable (no job inside; see 'dead list'): \(skipped.joined(separator: ", "))") }
            }
        }

        struct Purge: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "purge", abstract: "Delete every dead letter.")
            @OptionGroup var redis: RedisOptions

            func run() async throws {
                let configuration = loadConfiguration(redis)
                let count = try await withStore(configuration) { store in
                    let reply = try await store.redis.pipeline([
                        RedisCommand("LLEN", store.keys.dead), RedisCommand("DEL", store.keys.dead),
                    ])
                    return reply.first?.int ?? 0
                }
                print("purged \(count)")
            }
        }
    }
}

func withStore<T: Sendable>(_ configuration: PipelineConfiguration, _ body: (PipelineStore) async throws -> T) async throws -> T {
    let redis = RedisClient(configuration: configuration.redis, poolSize: configuration.redisPoolSize)
    do {
        let result = try await body(PipelineStore(redis: redis, keys: configuration.keys))
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
