import ArgumentParser
import Foundation
import IAPCLI
import IAPStages

/// `iapctl recheck`: ask Apple about a subscription now, whatever its schedule says.
struct RecheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recheck",
        abstract: "Re-check a subscription with Apple now (a verify worker queues it within a second).")
    @OptionGroup var redis: RedisOptions
    @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard !originalTransactionID.isEmpty, originalTransactionID.count <= 128 else {
            throw ValidationError("the original transaction id must be 1 to 128 characters")
        }
    }

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let id = originalTransactionID
        let found = try await withStore(configuration) { store in try await store.forceRecheck(originalTransactionID: id) }
        if json { return printJSON(["original_transaction_id": id, "result": found ? "due_now" : "unknown_subscription"]) }
        guard found else {
            print("no subscription \(id)")
            throw ExitCode(1)
        }
        print("\(id)  re-check due now")
    }
}
