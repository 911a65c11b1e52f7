import ArgumentParser
import Foundation
import IAPCLI
import PipelineCore
import IAPStages
import IAPOperations

/// `iapctl held`: the purchases the purchase policy keeps from their grant, and the operator's
/// decision on each (audited on the hold and on the fulfilment stream).
struct HeldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "held", abstract: "List, release or reject the purchases the purchase policy holds.",
        subcommands: [List.self, Release.self, Reject.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Held purchases, oldest first.")
        @OptionGroup var redis: RedisOptions
        @Option(help: "How many.") var limit = 100
        @Option(help: "Only those held for this reason (currency_not_allowed, daily_limit_exceeded, …).") var reason: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            let held = try await withStore(configuration) { try await $0.heldPurchases(limit: Int(Int32.max)) }
                .filter { reason == nil || $0.reason == reason }.prefix(max(limit, 0))
            if json { return printJSON(Array(held)) }
            for purchase in held {
                print(
                    "\(purchase.unit)  \(purchase.reason)  user=\(purchase.userID)  product=\(purchase.productID)"
                        + "  currency=\(purchase.currency ?? "-")  ticket=\(purchase.ticket)")
            }
            if held.isEmpty { print("no held purchases") }
        }
    }

    /// What `release` and `reject` share: which holds, and who decides.
    struct Decision: ParsableArguments {
        @Flag(help: "Every held purchase (with --reason: every one held for it).") var all = false
        @Option(help: "With --all: only those held for this reason.") var reason: String?
        @Option(help: "Who decides, for the audit (default: $USER).") var by: String?
        @Option(help: "Why, for the audit.") var note = ""
        @Flag(help: "Print JSON.") var json = false
        @Argument(help: "Units of held purchases (as 'held list' shows them), or tickets: every purchase a ticket holds.")
        var ids: [String] = []

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("give --all or one or more units or tickets") }
            if reason != nil && !all { throw ValidationError("--reason goes with --all") }
        }

        var operatorName: String { by ?? ProcessInfo.processInfo.environment["USER"] ?? "operator" }

        func decide(
            _ configuration: PipelineConfiguration,
            _ step: @escaping @Sendable (PipelineStore, String, String, String) async throws -> HeldPurchaseResult
        ) async throws {
            let chosen = ids
            let (all, reason, by, note) = (all, reason, operatorName, note)
            let (results, unmatched) = try await withStore(configuration) { store in
                var targets: [String] = []
                var unmatched: [String] = []
                if all {
                    targets = try await store.heldPurchases(limit: Int(Int32.max)).filter { reason == nil || $0.reason == reason }.map(\.unit)
                }
                for id in chosen {
                    let units = try await store.heldUnits(matching: id)
                    if units.isEmpty { unmatched.append(id) }
                    targets += units
                }
                var results: [(String, HeldPurchaseResult)] = []
                for unit in targets { results.append((unit, try await step(store, unit, by, note))) }
                return (results, unmatched)
            }
            if json {
                printJSON(results.map { unit, result -> [String: String] in
                    switch result {
                    case .decided(let decision): return ["unit": unit, "result": decision]
                    case .alreadyDecided(let status): return ["unit": unit, "result": "unchanged", "status": status]
                    case .notFound: return ["unit": unit, "result": "not_held"]
                    }
                } + unmatched.map { ["id": $0, "result": "no_match"] })
            } else {
                for (unit, result) in results {
                    switch result {
                    case .decided(let decision): print("\(unit)  \(decision)")
                    case .alreadyDecided(let status): print("\(unit)  unchanged: \(status) before")
                    case .notFound: print("\(unit)  unchanged: not held")
                    }
                }
                if results.isEmpty && unmatched.isEmpty { print("no held purchases") }
            }
            // An id that is neither a held unit nor a ticket holding one is the operator's mistake
            // (a typo, the wrong environment): said on stderr, and the command exits 1.
            for id in unmatched {
                FileHandle.standardError.write(Data("\(id): no held purchase has this unit or ticket\n".utf8))
            }
            if !unmatched.isEmpty { throw ExitCode.failure }
        }
    }

    struct Release: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "release", abstract: "Grant held purchases, once each (one refunded meanwhile is rejected).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var decision: Decision
        @OptionGroup var recheck: RecheckOptions

        func run() async throws {
            try await decision.decide(loadConfiguration(of: self)) { store, unit, by, note in
                try await store.releaseHeld(unit: unit, by: by, note: note)
            }
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reject", abstract: "Reject held purchases: never granted, to anyone.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var decision: Decision

        func run() async throws {
            try await decision.decide(loadConfiguration(of: self)) { store, unit, by, note in
                try await store.rejectHeld(unit: unit, by: by, note: note)
            }
        }
    }
}
