/// Why a local cluster could not be started or driven (not a finding about the pipeline).
public struct ClusterError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
