import AppleJWS

extension SignedDataVerifier {
    /// A signed transaction as a verification outcome: valid, or rejected with `invalid_signature`
    /// and the precise cause. Signed data that does not verify is never retried.
    public func outcome(of jws: String) async -> VerificationOutcome {
        do {
            return .valid(VerifiedReceipt(signed: try await verify(jws, as: JWSTransaction.self)))
        } catch {
            return .rejected(reason: AppleReason.invalidSignature, detail: error.description)
        }
    }
}
