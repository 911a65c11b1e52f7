import PlainJSON

extension VerifiedReceipt {
    public init(json: JSONValue) throws(JSONShapeError) {
        environment = try json.string("environment")
        bundleID = try json.string("bundle_id")
        transactions = try InAppTransaction.list(json.arrayIfPresent("transactions"))
        renewal = try json.objectIfPresent("renewal").map { value throws(JSONShapeError) in try SubscriptionRenewal(json: value) }
    }

    public var json: JSONValue {
        .members([
            "environment": .string(environment),
            "bundle_id": .string(bundleID),
            "transactions": .array(transactions.map(\.json)),
            "renewal": renewal?.json,
        ])
    }
}
