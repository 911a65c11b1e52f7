import AppleJWS
import AppleSimulator
import ClusterHarness

/// One submission of a trial, decided before the trial starts from the seed.
struct PlannedReceipt: SubmittableReceipt {
    let index: Int
    let scenario: ReceiptScenario
    let userID: String
    /// The evidence: receipt data, or (once `resolve` ran) a signed transaction or a transaction id.
    var receiptData: String
    /// The grant unit the receipt's purchase claims; `nil` when nothing can be granted.
    let unit: String?
    /// For a resubmission: the receipt whose ticket it must get back.
    let sameTicketAs: Int?
    var evidenceField = "receipt_data"
    /// A StoreKit 2 purchase apple-sim must know before it is submitted.
    var transaction: JWSTransaction?
    /// For `refunded`: how often Apple delivers the REFUND (0: never, a refund only Get Refund
    /// History tells, after the submission), and whether before the submission.
    var refund: (times: Int, beforeSubmission: Bool)?
}

extension PlannedReceipt {
    /// A trial's submissions: the scenario mix drawn from `rng`; duplicates, restores and
    /// resubmissions refer to earlier receipts of the same trial.
    static func plan(count: Int, trial: Int, using rng: inout SeededGenerator) -> [PlannedReceipt] {
        let scenarios = ReceiptScenario.allCases
        let totalWeight = scenarios.map(\.weight).reduce(0, +)
        var plan: [PlannedReceipt] = []
        var consumables: [Int] = []
        var nonConsumables: [Int] = []
        for index in 0..<count {
            var roll = Int.random(in: 0..<totalWeight, using: &rng)
            var scenario = scenarios.first { roll -= $0.weight; return roll < 0 } ?? .valid
            if scenario == .duplicate && consumables.isEmpty { scenario = .valid }
            if scenario == .restored && nonConsumables.isEmpty { scenario = .nonConsumable }
            if scenario == .resubmitted && plan.isEmpty { scenario = .valid }
            let id = "\(trial)-\(index)"
            let user = "player-\(Int.random(in: 0..<500, using: &rng))"
            func receipt(_ transactions: [SimulatedReceipt.Transaction], environment: String = "Production", status: Int? = nil,
                         transientFailures: Int? = nil, failureHTTPStatus: Int? = nil) -> String {
                SimulatedReceipt(
                    bundleID: LocalCluster.bundleID, environment: environment, transactions: transactions, status: status,
                    transientFailures: transientFailures, failureHTTPStatus: failureHTTPStatus, nonce: id
                ).receiptData()
            }
            let gold = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", productID: "drill.gold")
            let planned: PlannedReceipt
            switch scenario {
            case .valid:
                planned = .init(index: index, scenario: scenario, userID: user, receiptData: receipt([gold]), unit: gold.transactionID, sameTicketAs: nil)
            case .sandbox:
                planned = .init(index: index, scenario: scenario, userID: user, receiptData: receipt([gold], environment: "Sandbox"),
                                unit: gold.transactionID, sameTicketAs: nil)
            case .transient:
                let viaHTTP = Bool.random(using: &rng)
                planned = .init(index: index, scenario: scenario, userID: user,
                                receiptData: receipt([gold], transientFailures: 2, failureHTTPStatus: viaHTTP ? 503 : nil),
                                unit: gold.transactionID, sameTicketAs: nil)
            case .duplicate:
                let earlier = plan[consumables.randomElement(using: &rng)!]
                let copied = SimulatedReceipt.Transaction(transactionID: earlier.unit!, productID: "drill.gold")
                planned = .init(index: index, scenario: scenario, userID: "thief-\(index)", receiptData: receipt([copied]),
                                unit: earlier.unit, sameTicketAs: nil)
            case .nonConsumable:
                let pack = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", productID: "drill.pack")
                planned = .init(index: index, scenario: scenario, userID: user, receiptData: receipt([pack]), unit: pack.transactionID, sameTicketAs: nil)
            case .restored:
                let earlier = plan[nonConsumables.randomElement(using: &rng)!]
                let restore = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", originalTransactionID: earlier.unit!, productID: "drill.pack")
                planned = .init(index: index, scenario: scenario, userID: earlier.userID, receiptData: receipt([restore]),
                                unit: earlier.unit, sameTicketAs: nil)
            case .invalid:
                planned = .init(index: index, scenario: scenario, userID: user, receiptData: receipt([gold], status: 21003), unit: nil, sameTicketAs: nil)
            case .capped:
                // Few players, so most of them go over the cap within the trial.
                let gem = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", productID: "drill.gem")
                planned = .init(
                    index: index, scenario: scenario, userID: "gem-player-\(Int.random(in: 0..<20, using: &rng))",
                    receiptData: receipt([gem]), unit: gem.transactionID, sameTicketAs: nil)
            case .resubmitted:
                planned = resubmission(of: plan[Int.random(in: 0..<plan.count, using: &rng)], in: plan, index: index)
            case .signed, .lookup, .refunded:
                planned = storeKit(index: index, scenario: scenario, user: user, id: id, gold: gold, using: &rng)
            }
            switch scenario {
            case .valid, .sandbox, .transient, .signed, .lookup: consumables.append(index)
            case .nonConsumable: nonConsumables.append(index)
            default: break
            }
            plan.append(planned)
        }
        return plan
    }
    /// The same evidence as an earlier receipt (or as the one that receipt resent), from its user:
    /// it must get the first one's ticket.
    private static func resubmission(of earlier: PlannedReceipt, in plan: [PlannedReceipt], index: Int) -> PlannedReceipt {
        let original = earlier.sameTicketAs.map { plan[$0] } ?? earlier
        var copy = PlannedReceipt(
            index: index, scenario: .resubmitted, userID: original.userID, receiptData: original.receiptData,
            unit: original.unit, sameTicketAs: original.index)
        copy.evidenceField = original.evidenceField
        copy.transaction = original.transaction
        return copy
    }

    /// The storefronts, currencies and unit prices (milliunits) the drill's StoreKit 2 purchases are sold in.
    static let sales: [(String, String, Int64)] = [("USA", "USD", 990), ("DEU", "EUR", 1_090), ("JPN", "JPY", 160_000), ("GBR", "GBP", 990)]

    /// A StoreKit 2 purchase, sent signed or as a transaction id; a refunded one with its refund
    /// (how often Apple notifies it, whether before the submission).
    private static func storeKit(
        index: Int, scenario: ReceiptScenario, user: String, id: String, gold: SimulatedReceipt.Transaction,
        using rng: inout SeededGenerator
    ) -> PlannedReceipt {
        var refund: (times: Int, beforeSubmission: Bool)?
        if scenario == .refunded {
            refund = (Int.random(in: 1...3, using: &rng), Bool.random(using: &rng))
            // One in three refunds after the submission Apple never notifies; its buyer has
            // no other purchase, so the refund sweep asks about this one.
            if Int.random(in: 0..<3, using: &rng) == 0, refund?.beforeSubmission == false { refund?.times = 0 }
        }
        var storeKit = PlannedReceipt(
            index: index, scenario: scenario, userID: refund?.times == 0 ? "silent-\(id)" : user, receiptData: "",
            unit: gold.transactionID, sameTicketAs: nil)
        storeKit.evidenceField = scenario == .lookup ? "transaction_id" : "signed_transaction"
        var transaction = JWSTransaction(
            transactionID: gold.transactionID, bundleID: LocalCluster.bundleID, productID: "drill.gold",
            purchaseDate: 1_700_000_000_000 + Int64(index), type: "Consumable", environment: "Production")
        // Priced as Apple prices it, in four storefronts, so the figures' money is recounted after the faults.
        let (storefront, currency, price) = Self.sales[index % Self.sales.count]
        transaction.storefront = storefront
        transaction.currency = currency
        transaction.price = price * Int64(1 + index % 5)
        transaction.inAppOwnershipType = "PURCHASED"
        storeKit.transaction = transaction
        storeKit.refund = refund
        return storeKit
    }
}

extension [PlannedReceipt] {
    /// Makes the trial's StoreKit 2 purchases known to apple-sim and fills in their evidence (the
    /// signed transaction, or the id for a lookup), resubmissions included.
    mutating func resolve(with cluster: LocalCluster) async throws {
        for index in indices {
            guard let transaction = self[index].transaction else { continue }
            if let original = self[index].sameTicketAs {
                self[index].receiptData = self[original].receiptData
                continue
            }
            let signed = try await cluster.registerTransaction(transaction)
            self[index].receiptData = self[index].evidenceField == "transaction_id" ? transaction.transactionID : signed
        }
    }
}

extension PlannedReceipt {
    /// A plain new consumable purchase, for targeted checks.
    static func valid(index: Int, trial: Int = 0) -> PlannedReceipt {
        let id = "\(trial)-\(index)"
        return PlannedReceipt(
            index: index, scenario: .valid, userID: "player-\(index)", receiptData: LocalCluster.consumableReceipt(id: id),
            unit: "tx-\(id)", sameTicketAs: nil)
    }
}
