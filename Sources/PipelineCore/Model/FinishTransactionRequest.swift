import PlainJSON

/// A notify job's errand to Apple: tell the App Store that the pipeline has delivered a granted
/// consumable (Finish Transaction), so that a client that crashed before it finished the
/// transaction is not handed it again. `grant_purchases` queues it in the step that grants the
/// purchase, so no crash loses it; the notify stage makes the call.
package struct FinishTransactionRequest: AppleErrand, Codable, Equatable {
    package var transactionID: String
    /// `Production` or `Sandbox`: where the purchase was made.
    package var environment: String
    /// The purchase's app: the call goes out with its key (`IAP_APPS_FILE`).
    package var bundleID: String?

    package init(transactionID: String, environment: String, bundleID: String? = nil) {
        self.transactionID = transactionID
        self.environment = environment
        self.bundleID = bundleID
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case environment
        case bundleID = "bundle_id"
    }

    init(json: JSONValue) throws(JSONShapeError) {
        transactionID = try json.string("transaction_id")
        environment = try json.stringIfPresent("environment") ?? "Production"
        bundleID = try json.stringIfPresent("bundle_id")
    }

    func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("bundle_id", bundleID)
        json.member("environment", environment)
        json.member("transaction_id", transactionID)
        json.closeObject()
    }

    /// Its ticket: `finish-<transaction id>`.
    package static let ticketPrefix = "finish"
    package static let source = "finish_transaction"

    package var work: Job.Work { .finishTransaction(self) }
}
