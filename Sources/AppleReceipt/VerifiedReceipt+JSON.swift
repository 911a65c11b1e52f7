import PlainJSON

extension VerifiedReceipt {
    public init(json: JSONValue) throws(JSONShapeError) {
        environment = try json.string("environment")
        bundleID = try json.string("bundle_id")
        transactions = try InAppTransaction.list(json.arrayIfPresent("transactions"))
        renewal = try json.objectIfPresent("renewal").map { value throws(JSONShapeError) in try SubscriptionRenewal(json: value) }
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
