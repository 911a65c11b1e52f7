/// Why a local cluster could not be started or driven (not a finding about the pipeline).
package struct ClusterError: Error, CustomStringConvertible, Sendable {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
