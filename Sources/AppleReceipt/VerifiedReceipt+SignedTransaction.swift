import AppleJWS

extension VerifiedReceipt {
    /// A verified StoreKit 2 transaction in the shape the rest of the pipeline grants from: the
    /// same transaction ids as a receipt's, so dedupe meets a purchase whichever way it came.
    public init(signed transaction: JWSTransaction) {
        self.init(
            environment: transaction.environment ?? "Production", bundleID: transaction.bundleID,
            transactions: [InAppTransaction(signed: transaction)])
    }
}

extension InAppTransaction {
    /// `revocationDate` (refunded or revoked) plays the part of a receipt's `cancellation_date_ms`.
    public init(signed transaction: JWSTransaction) {
        self.init(
            transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
            productID: transaction.productID, quantity: transaction.quantity ?? 1,
            webOrderLineItemID: transaction.webOrderLineItemID, purchaseDateMs: transaction.purchaseDate.map { String($0) },
            cancellationDateMs: transaction.revocationDate.map { String($0) })
        originalPurchaseDateMs = transaction.originalPurchaseDate.map { String($0) }
        appAccountToken = transaction.appAccountToken
        appTransactionID = transaction.appTransactionID
        inAppOwnershipType = transaction.inAppOwnershipType
        currency = transaction.currency
        expiresDateMs = transaction.expiresDate.map { String($0) }
        signedDateMs = transaction.signedDate.map { String($0) }
        storefront = transaction.storefront
        price = transaction.price.map { String($0) }
        offerType = transaction.offerType.map { String($0) }
        offerIdentifier = transaction.offerIdentifier
        offerDiscountType = transaction.offerDiscountType
        offerPeriod = transaction.offerPeriod
        billingPlanType = transaction.billingPlanType
        commitmentPeriod = transaction.commitmentInfo?.billingPeriodNumber.map { String($0) }
        commitmentPeriods = transaction.commitmentInfo?.totalBillingPeriods.map { String($0) }
        commitmentExpiresDateMs = transaction.commitmentInfo?.commitmentExpiresDate.map { String($0) }
        commitmentPrice = transaction.commitmentInfo?.commitmentPrice.map { String($0) }
    }
}
