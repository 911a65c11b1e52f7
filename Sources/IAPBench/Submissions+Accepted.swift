import ClusterHarness

extension Array where Element == LoadClient.Submission {
    /// The submissions, when the intake gave every one a ticket; else the scenario fails, naming
    /// the first refusal (a figure over receipts that were never accepted means nothing).
    @discardableResult
    func allAccepted(in scenario: String) throws -> Self {
        if let refused = first(where: { $0.ticket == nil }) {
            throw BenchError("\(scenario): the intake did not accept a receipt: \(refused.error ?? "?")")
        }
        return self
    }
}
