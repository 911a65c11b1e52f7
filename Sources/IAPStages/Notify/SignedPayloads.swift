import PlainJSON

/// A notification's payloads as Apple signed them (JSON bytes, checked signatures), kept so that
/// its `notification` entry carries every member Apple sent, those this build does not decode
/// too: `transaction`, `renewal` and `app_transaction` (the signed members, decoded whole),
/// `summary` and `external_purchase_token` (the notification's own), and `notification`: the
/// notification's payload itself, less the signed members (decoded beside it).
struct SignedPayloads {
    var notification: [UInt8]
    var transaction: [UInt8]?
    var renewal: [UInt8]?
    var appTransaction: [UInt8]?

    /// The canonical JSON text of the entry's `payload`; `nil` if a payload is not JSON (it was
    /// decoded already, so this does not happen; the entry then re-encodes what was decoded).
    var whole: String? {
        guard case .object(var outer) = try? JSONValue(parsing: notification) else { return nil }
        outer["data"] = Self.removing("signedTransactionInfo", "signedRenewalInfo", from: outer["data"])
        outer["appData"] = Self.removing("signedAppTransactionInfo", from: outer["appData"])
        var members: JSONObject = ["notification": .object(outer)]
        members["summary"] = outer["summary"]
        members["external_purchase_token"] = outer["externalPurchaseToken"]
        for (name, bytes) in [("transaction", transaction), ("renewal", renewal), ("app_transaction", appTransaction)] {
            guard let bytes else { continue }
            guard let value = try? JSONValue(parsing: bytes) else { return nil }
            members[name] = value
        }
        return JSONValue.object(members).canonicalText
    }

    private static func removing(_ names: String..., from value: JSONValue?) -> JSONValue? {
        guard case .object(var members)? = value else { return value }
        for name in names { members[name] = nil }
        return .object(members)
    }
}
