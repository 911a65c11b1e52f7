import AppleReceipt
@testable import PipelineCore
import PlainJSON
import Testing

/// A job's text written straight from its values (`CanonicalJSONWriter`) is byte for byte what
/// the tree wrote before it (`JSONValue.canonicalText` of the job's `JSONObject`), for jobs with
/// every member their kinds carry set; it reads back as the same job.
@Suite struct CanonicalJobTextTests {
    /// What the tree wrote for `FullJobs.jobs`, then for its purchase, renewal and transaction
    /// (captured from 8bbe787, before the writer).
    static let writtenByTheTree: [String] = [
        #"{"apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","currency":"JPY","dry_run":true,"enqueued_at":-5,"part":"7.T-full","product_id":"pro.monthly","receipt_data":"MIIT+/==","source":"import","stage":"verify","ticket":"T-full","transaction_id":"2000000000000009","user_id":"ü\t\""}"#,
        #"{"apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","enqueued_at":-5,"part":"7.T-full","source":"import","stage":"verify","ticket":"T-full","transaction_id":"44","user_id":"ü\t\""}"#,
        #"{"apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","enqueued_at":-5,"part":"7.T-full","signed_app_transaction":"eyJ.app.sig","source":"import","stage":"verify","ticket":"T-full","user_id":"ü\t\""}"#,
        #"{"apple_account":"705","apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","currency":"JPY","dry_run":true,"enqueued_at":-5,"history_revision":"hr:9","part":"7.T-full","product_id":"pro.monthly","receipt":{"bundle_id":"com.example.game","environment":"Sandbox","renewal":{"auto_renew":0,"eligible_win_back_offer_ids":["wb-1","wb/2"],"expiration_intent":2,"grace_expires_at":-9223372036854775808,"history_revision":"hr:9","original_transaction_id":"2000000000000001","renewal_plan":[],"signed_at":9223372036854775807,"status":"grace"},"transactions":[{"app_account_token":"0f0e-\"quoted\"\\back\nline\u0001","app_transaction_id":"705","billing_plan_type":"MONTHLY","cancellation_date_ms":"1700000000500","commitment_expires_date_ms":"1730000000000","commitment_period":"P1M","commitment_periods":"12","commitment_price":"9990","currency":"JPY","expires_date_ms":"1702600000000","in_app_ownership_type":"FAMILY_SHARED","offer_discount_type":"FREE_TRIAL","offer_identifier":"WIN-BACK é ✓","offer_period":"P1W","offer_type":"2","original_purchase_date_ms":"1690000000000","original_transaction_id":"2000000000000001","price":"-120","product_id":"pro.monthly","purchase_date_ms":"1700000000000","quantity":"3","signed_date_ms":"1700000000001","storefront":"JPN","transaction_id":"2000000000000009","web_order_line_item_id":"wol-1"},{"original_transaction_id":"1","product_id":"coins","quantity":"1","transaction_id":"1"}]},"source":"import","stage":"dedupe","subscription_receipt":"MIIsub==","ticket":"T-full","transaction_id":"2000000000000009","user_id":"ü\t\""}"#,
        #"{"app_bundle_id":"com.example.game","apple_account_limit":2,"apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","enqueued_at":-5,"environment":"Sandbox","part":"7.T-full","purchases":[{"adopt":true,"consumable":false,"currency":"JPY","daily_limit":0,"entitlements":["pro","ad_free","\u001f"],"expires_at":1702600000000,"kind":"auto_renewable","original_transaction_id":"2000000000000001","outcome":"held","product_id":"pro.monthly","quantity":-1,"reason":"daily_limit","signed_at":0,"transaction":{"app_account_token":"0f0e-\"quoted\"\\back\nline\u0001","app_transaction_id":"705","billing_plan_type":"MONTHLY","cancellation_date_ms":"1700000000500","commitment_expires_date_ms":"1730000000000","commitment_period":"P1M","commitment_periods":"12","commitment_price":"9990","currency":"JPY","expires_date_ms":"1702600000000","in_app_ownership_type":"FAMILY_SHARED","offer_discount_type":"FREE_TRIAL","offer_identifier":"WIN-BACK é ✓","offer_period":"P1W","offer_type":"2","original_purchase_date_ms":"1690000000000","original_transaction_id":"2000000000000001","price":"-120","product_id":"pro.monthly","purchase_date_ms":"1700000000000","quantity":"3","signed_date_ms":"1700000000001","storefront":"JPN","transaction_id":"2000000000000009","web_order_line_item_id":"wol-1"},"transaction_id":"2000000000000009","unit":"2000000000000001:1702600000000"},{"original_transaction_id":"1","outcome":"rejected","product_id":"coins","quantity":1,"transaction":{"original_transaction_id":"1","product_id":"coins","quantity":"1","transaction_id":"1"},"transaction_id":"1"}],"refund_limit":3,"renewal":{"auto_renew":0,"eligible_win_back_offer_ids":["wb-1","wb/2"],"expiration_intent":2,"grace_expires_at":-9223372036854775808,"history_revision":"hr:9","original_transaction_id":"2000000000000001","renewal_plan":[],"signed_at":9223372036854775807,"status":"grace"},"renewal_period":{"app_account_token":"0f0e-\"quoted\"\\back\nline\u0001","app_transaction_id":"705","billing_plan_type":"MONTHLY","cancellation_date_ms":"1700000000500","commitment_expires_date_ms":"1730000000000","commitment_period":"P1M","commitment_periods":"12","commitment_price":"9990","currency":"JPY","expires_date_ms":"1702600000000","in_app_ownership_type":"FAMILY_SHARED","offer_discount_type":"FREE_TRIAL","offer_identifier":"WIN-BACK é ✓","offer_period":"P1W","offer_type":"2","original_purchase_date_ms":"1690000000000","original_transaction_id":"2000000000000001","price":"-120","product_id":"pro.monthly","purchase_date_ms":"1700000000000","quantity":"3","signed_date_ms":"1700000000001","storefront":"JPN","transaction_id":"2000000000000009","web_order_line_item_id":"wol-1"},"sharing":"bind","source":"import","stage":"grant","subscription_receipt":"MIIsub==","ticket":"T-full","user_id":"ü\t\""}"#,
        #"{"apple_failed_at":1700000000999,"attempts":12,"bundle_id":"com.example.game","enqueued_at":-5,"part":"7.T-full","purchases":[],"source":"import","stage":"grant","ticket":"T-full","user_id":"ü\t\""}"#,
        #"{"adopt":true,"consumable":false,"currency":"JPY","daily_limit":0,"entitlements":["pro","ad_free","\u001f"],"expires_at":1702600000000,"kind":"auto_renewable","original_transaction_id":"2000000000000001","outcome":"held","product_id":"pro.monthly","quantity":-1,"reason":"daily_limit","signed_at":0,"transaction":{"app_account_token":"0f0e-\"quoted\"\\back\nline\u0001","app_transaction_id":"705","billing_plan_type":"MONTHLY","cancellation_date_ms":"1700000000500","commitment_expires_date_ms":"1730000000000","commitment_period":"P1M","commitment_periods":"12","commitment_price":"9990","currency":"JPY","expires_date_ms":"1702600000000","in_app_ownership_type":"FAMILY_SHARED","offer_discount_type":"FREE_TRIAL","offer_identifier":"WIN-BACK é ✓","offer_period":"P1W","offer_type":"2","original_purchase_date_ms":"1690000000000","original_transaction_id":"2000000000000001","price":"-120","product_id":"pro.monthly","purchase_date_ms":"1700000000000","quantity":"3","signed_date_ms":"1700000000001","storefront":"JPN","transaction_id":"2000000000000009","web_order_line_item_id":"wol-1"},"transaction_id":"2000000000000009","unit":"2000000000000001:1702600000000"}"#,
        #"{"auto_renew":0,"eligible_win_back_offer_ids":["wb-1","wb/2"],"expiration_intent":2,"grace_expires_at":-9223372036854775808,"history_revision":"hr:9","original_transaction_id":"2000000000000001","renewal_plan":[],"signed_at":9223372036854775807,"status":"grace"}"#,
        #"{"app_account_token":"0f0e-\"quoted\"\\back\nline\u0001","app_transaction_id":"705","billing_plan_type":"MONTHLY","cancellation_date_ms":"1700000000500","commitment_expires_date_ms":"1730000000000","commitment_period":"P1M","commitment_periods":"12","commitment_price":"9990","currency":"JPY","expires_date_ms":"1702600000000","in_app_ownership_type":"FAMILY_SHARED","offer_discount_type":"FREE_TRIAL","offer_identifier":"WIN-BACK é ✓","offer_period":"P1W","offer_type":"2","original_purchase_date_ms":"1690000000000","original_transaction_id":"2000000000000001","price":"-120","product_id":"pro.monthly","purchase_date_ms":"1700000000000","quantity":"3","signed_date_ms":"1700000000001","storefront":"JPN","transaction_id":"2000000000000009","web_order_line_item_id":"wol-1"}"#,
    ]

    @Test func everyMemberIsWrittenAsTheTreeWroteIt() {
        let written = FullJobs.jobs.map { $0.encoded() } + [
            FullJobs.purchase.json.canonicalText, FullJobs.renewal.json.canonicalText, FullJobs.transaction.json.canonicalText,
        ]
        #expect(written.count == Self.writtenByTheTree.count)
        for (now, before) in zip(written, Self.writtenByTheTree) {
            #expect(now == before)
        }
    }

    /// The kinds written elsewhere too (a sync, a re-check, deliveries, the errands, a dry run):
    /// the canonical text of what the previous version or the scripts wrote.
    @Test func theOtherKindsAreWrittenAsTheTreeWouldWriteThem() throws {
        for (text, job) in JobJSONTests.writtenElsewhere {
            #expect(job.encoded() == (try JSONValue(parsing: text)).canonicalText, "\(text)")
        }
    }

    @Test func everyMemberReadsBack() throws {
        for job in FullJobs.jobs {
            #expect(try Job.decode(job.encoded()) == job)
            #expect(try Job(json: job.json) == job)
        }
        #expect(try Purchase(json: FullJobs.purchase.json) == FullJobs.purchase)
        #expect(try SubscriptionRenewal(json: FullJobs.renewal.json) == FullJobs.renewal)
        #expect(try InAppTransaction(json: FullJobs.transaction.json) == FullJobs.transaction)
    }
}
