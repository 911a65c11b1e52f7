import AppleSimulator
import ClusterHarness
import Foundation
import PipelineCore

/// A subscription the drill has apple-sim play during a trial: bought by one player, renewed by
/// apple-sim every `period` with no client, `renewals` times, then expired or in billing retry.
/// Half of them have Apple's notices sent (some lost, duplicated, late); the others are only
/// known through the pipeline's own re-checks.
struct PlannedSubscription: SubmittableReceipt {
    var plan: SimulatedSubscription
    var userID: String
    /// The first period's signed transaction, once apple-sim started it.
    var receiptData = ""
    var evidenceField: String { "signed_transaction" }

    static let period: Int64 = 2000
    static let product = "drill.vip"

    var originalTransactionID: String { plan.originalTransactionID }
    /// Every period apple-sim renews, the first one included: their grant units.
    var units: [String] { (0...(plan.renewals ?? 0)).map { "wol:\(plan.originalTransactionID)-w\($0)" } }
    /// When its last period ends (UNIX ms), once started.
    var endsAt: Int64 { (plan.start ?? 0) + Int64((plan.renewals ?? 0) + 1) * plan.periodMs }
    var expectedStatus: String { plan.ending == .expire ? "expired" : "billing_retry" }

    static func plan(count: Int, trial: Int, intakeURL: String, using rng: inout SeededGenerator) -> [PlannedSubscription] {
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        return (0..<count).map { index in
            // A quarter straight to the intake (lost, doubled, late, never retried); a quarter as
            // Apple sends (attempts lost, retried, then only in the history); half with none.
            let notify: SimulatedSubscription.Notify? = switch index % 4 {
            case 0: SimulatedSubscription.Notify(url: intakeURL + "/v1/notifications/apple", lossRate: 0.3, duplicateRate: 0.3, maxDelayMs: 1500)
            case 2: SimulatedSubscription.Notify(url: nil, lossRate: 0.3)
            default: nil
            }
            let plan = SimulatedSubscription(
                originalTransactionID: "sub-\(trial)-\(index)", productID: product, bundleID: LocalCluster.bundleID,
                periodMs: period, renewals: Int.random(in: 1...3, using: &rng),
                ending: index % 3 == 2 ? .billingRetry : .expire, start: start, notify: notify)
            return PlannedSubscription(plan: plan, userID: "subscriber-\(trial)-\(index)")
        }
    }
}
