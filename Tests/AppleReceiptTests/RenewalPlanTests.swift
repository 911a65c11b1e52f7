import AppleJWS
import AppleReceipt
import PlainJSON
import Testing

/// A renewal info's billing plan as the subscription record's fields, and a re-check's answer
/// carrying them through a job's JSON.
@Suite struct RenewalPlanTests {
    @Test func aRenewalInfoWithoutAPlanSaysNothingOneWithAPlanSaysItsCommitment() throws {
        var renewal = JWSRenewalInfo(originalTransactionID: "1")
        #expect(renewal.renewalPlanFields == nil)
        renewal.renewalBillingPlanType = "BILLED_UPFRONT"
        #expect(renewal.renewalPlanFields == ["renewal_billing_plan_type", "BILLED_UPFRONT"])
        renewal.renewalBillingPlanType = "MONTHLY"
        renewal.commitmentInfo = RenewalCommitment(autoRenewProductID: "vip.monthly", autoRenewStatus: 1, renewalDate: 1_800_000_000_000)
        #expect(renewal.renewalPlanFields == [
            "renewal_billing_plan_type", "MONTHLY", "commitment_renews", "1", "commitment_renewal_product_id", "vip.monthly",
            "commitment_renewal_at", "1800000000000",
        ])
    }

    @Test func aRecheckAnswerCarriesThePlanThroughItsJSON() throws {
        var answer = SubscriptionRenewal(originalTransactionID: "1", status: "active", autoRenew: 1, graceExpiresAt: nil, signedAt: 5)
        answer.renewalPlan = ["renewal_billing_plan_type", "MONTHLY", "commitment_renews", "0"]
        #expect(try SubscriptionRenewal(json: try JSONValue(parsing: answer.json.canonicalText)) == answer)
        answer.renewalPlan = nil
        #expect(try SubscriptionRenewal(json: try JSONValue(parsing: answer.json.canonicalText)).renewalPlan == nil)
    }

    /// The commitment Apple signs into a transaction reaches the fields the grant keeps.
    @Test func aSignedTransactionsCommitmentReachesItsFields() {
        var signed = JWSTransaction(transactionID: "2", bundleID: "b", productID: "vip.monthly")
        signed.billingPlanType = "MONTHLY"
        signed.commitmentInfo = TransactionCommitment(
            billingPeriodNumber: 2, totalBillingPeriods: 12, commitmentExpiresDate: 1_800_000_000_000, commitmentPrice: 9990)
        let transaction = InAppTransaction(signed: signed)
        #expect(transaction.billingPlanType == "MONTHLY" && transaction.commitmentPeriod == "2" && transaction.commitmentPeriods == "12")
        #expect(transaction.commitmentExpiresDateMs == "1800000000000" && transaction.commitmentPrice == "9990")
        #expect(InAppTransaction(signed: JWSTransaction(transactionID: "3", bundleID: "b", productID: "p")).billingPlanType == nil)
    }
}
