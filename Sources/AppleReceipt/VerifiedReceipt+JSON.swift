import PlainJSON

extension VerifiedReceipt {
    /// Reads the receipt the cursor is on (a job's, straight from its text).
    public init(reading json: inout JSONCursor) throws(JSONShapeError) {
        var environment: String?
        var bundleID: String?
        var transactions: [InAppTransaction] = []
        var renewal: SubscriptionRenewal?
        let isObject = try json.members(asMember: "receipt") { name, value throws(JSONShapeError) in
            switch name {
            case "environment": environment = try value.string(asMember: "environment")
            case "bundle_id": bundleID = try value.string(asMember: "bundle_id")
            case "transactions":
                transactions = []
                _ = try value.items(asMember: "transactions") { item throws(JSONShapeError) in
                    transactions.append(try InAppTransaction(reading: &item))
                }
            case "renewal": renewal = try value.object(asMember: "renewal").map { tree throws(JSONShapeError) in try SubscriptionRenewal(json: tree) }
            default: break
            }
        }
        guard isObject else { throw JSONShapeError(member: "environment", reason: "not in an object") }
        guard let environment else { throw JSONShapeError(member: "environment", reason: "missing") }
        guard let bundleID else { throw JSONShapeError(member: "bundle_id", reason: "missing") }
        self.init(environment: environment, bundleID: bundleID, transactions: transactions, renewal: renewal)
    }

    public var json: JSONValue { CanonicalJSONWriter.value(write) }

    /// The receipt as a job carries it, in name order.
    public func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("bundle_id", bundleID)
        json.member("environment", environment)
        if let renewal {
            json.name("renewal")
            renewal.write(to: &json)
        }
        json.name("transactions")
        json.openArray()
        for transaction in transactions { transaction.write(to: &json) }
        json.closeArray()
        json.closeObject()
    }
}
