import PlainJSON

/// A re-check job's evidence: the subscription to ask Apple about, and the environment its
/// record says it lives in. `promote_due_rechecks` writes it (with `cjson`); the verify stage reads it.
package struct RecheckRequest: Codable, Sendable, Equatable {
    package var originalTransactionID: String
    /// `Production` or `Sandbox`.
    package var environment: String
    /// The latest period the record knows, and its end: periods Apple has since begun are all
    /// fetched (a re-check late by more than a period must not skip one).
    package var latestTransactionID: String?
    package var expiresAt: Int64?
    /// Where the last re-check read the customer's history to (the record's `history_revision`).
    package var historyRevision: String?

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id"
        case environment
        case latestTransactionID = "latest_transaction_id"
        case expiresAt = "expires_at"
        case historyRevision = "history_revision"
    }
}

/// Its JSON inside a job (an extension, so that the memberwise initialiser stays).
extension RecheckRequest {
    init(json: JSONValue) throws(JSONShapeError) {
        originalTransactionID = try json.string("original_transaction_id")
        environment = try json.stringIfPresent("environment") ?? "Production"
        latestTransactionID = try json.stringIfPresent("latest_transaction_id").flatMap { $0.isEmpty ? nil : $0 }
        expiresAt = try json.stringIfPresent("expires_at").flatMap { Int64($0) }
        historyRevision = try json.stringIfPresent("history_revision").flatMap { $0.isEmpty ? nil : $0 }
    }

    func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("environment", environment)
        json.member("expires_at", expiresAt.map { String($0) })
        json.member("history_revision", historyRevision)
        json.member("latest_transaction_id", latestTransactionID)
        json.member("original_transaction_id", originalTransactionID)
        json.closeObject()
    }
}
