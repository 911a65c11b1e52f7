import SwiftASN1
import X509

/// Apple's own rule on top of RFC 5280: exactly leaf → intermediate → root, with Apple's marker
/// extensions on the leaf (App Store receipt signing) and on the intermediate (WWDR).
struct AppleMarkerPolicy: VerifierPolicy {
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, not leaf, intermediate and root")
        }
        guard chain[0].extensions.contains(where: { $0.oid == Self.leafOID }) else {
            return .failsToMeetPolicy(reason: "the leaf lacks Apple's marker OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions.contains(where: { $0.oid == Self.intermediateOID }) else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
