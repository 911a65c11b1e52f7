import AppleJWS
import Foundation

/// What Apple signs, as the suites build it: an Apple Account's app transaction and StoreKit 2
/// transactions of the harness's app (sign them with `pipeline.authority.signer`).
package enum SignedFixture {
    /// The Apple Account (`appTransactionId`) the suites bind.
    package static let appleAccount = "704289572311234567"

    package static func appTransaction(_ id: String? = appleAccount, bundleID: String = PipelineHarness.bundleID) -> JWSAppTransaction {
        JWSAppTransaction(
            appTransactionID: id, bundleID: bundleID, receiptType: "Production",
            receiptCreationDate: Int64(Date().timeIntervalSince1970 * 1000))
    }

    package static func transaction(
        _ id: String, product: String = "gold.100", bundleID: String = PipelineHarness.bundleID, environment: String = "Production",
        revoked: Bool = false
    ) -> JWSTransaction {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return JWSTransaction(
            transactionID: id, bundleID: bundleID, productID: product, purchaseDate: now - 1000, type: "Consumable",
            appAccountToken: "7f1c9d1e-1111-4c2b-9a55-1b2c3d4e5f60", signedDate: now, revocationDate: revoked ? now : nil,
            environment: environment)
    }

    /// A consumable bought now, in the sandbox, as a notification carries it.
    package static func consumable(_ id: String, product: String = "gold.100", token: String? = nil) -> JWSTransaction {
        JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: product,
            purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", appAccountToken: token,
            environment: "Sandbox")
    }

    /// A gold pack sold at 4.99 in `currency` with an offer: what reaches the `granted` event.
    package static func sold(_ id: String, currency: String) -> JWSTransaction {
        var transaction = JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", purchaseDate: 1_700_000_000_000)
        transaction.price = 4_990
        transaction.currency = currency
        transaction.storefront = "USA"
        transaction.inAppOwnershipType = "PURCHASED"
        transaction.offerType = 2
        transaction.offerIdentifier = "spring.gold"
        transaction.offerDiscountType = "PAY_UP_FRONT"
        return transaction
    }
}
