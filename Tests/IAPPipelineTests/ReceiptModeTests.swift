import AppleJWS
import AppleSimulator
import Foundation
import IAPSettings
import IAPStages
import PipelineCore
import PipelineTestSupport
import Testing

/// `IAP_RECEIPT_MODE=server_api`: a legacy receipt is verified without verifyReceipt, by reading
/// its transaction ids out of the PKCS#7 container and asking the Server API, which brings the
/// price and the Apple Account too; what cannot be read is rejected `invalid_receipt`.
@Suite(.serialized) struct ReceiptModeTests {
    static let serverAPI = ["IAP_RECEIPT_MODE": "server_api"]

    func submit(_ pipeline: PipelineHarness, _ receiptData: String, user: String) async throws -> Ticket {
        let reply = try await pipeline.post(["receipt_data": receiptData, "user_id": user])
        #expect(reply.status == 202, "\(reply.json)")
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
    }

    @Test func aLegacyReceiptIsVerifiedByTheServerAPIWithNoVerifyReceiptCall() async throws {
        try await withPipeline(serverAPI: true, environment: Self.serverAPI) { pipeline in
            let api = pipeline.simulator.serverAPI
            var gold = SignedFixture.transaction("2000000000000081")
            gold.price = 4990
            gold.currency = "USD"
            gold.appTransactionID = "705000000000081"
            _ = try api.register(gold)
            _ = try api.register(SignedFixture.transaction("2000000000000082", product: "level.pack"))
            let receipt = SimulatedAppReceipt(bundleID: PipelineHarness.bundleID, purchases: [
                .init(transactionID: "2000000000000081", productID: "gold.100"),
                .init(transactionID: "2000000000000082", productID: "level.pack"),
            ])
            let ticket = try await submit(pipeline, receipt.receiptData(), user: "alice")
            #expect(ticket.status == .granted, "\(ticket)")
            #expect(ticket.transactions.map(\.transactionID).sorted() == ["2000000000000081", "2000000000000082"])
            #expect(pipeline.simulator.requestCount == 0, "verifyReceipt was never called")
            // What Apple signed came with it: the price and the Apple Account.
            let granted = try await pipeline.fulfilments().first { $0["transaction_id"] == "2000000000000081" }
            #expect(granted?["price"] == "4990" && granted?["currency"] == "USD" && granted?["app_transaction_id"] == "705000000000081")
        }
    }

    @Test func whatCannotBeReadOrIsUnknownToAppleIsRejected() async throws {
        try await withPipeline(serverAPI: true, environment: Self.serverAPI) { pipeline in
            // A receipt apple-sim's verifyReceipt would take (its JSON form) is no app receipt.
            let json = SimulatedReceipt(bundleID: PipelineHarness.bundleID, transactions: [.init(transactionID: "1", productID: "gold.100")])
            let unreadable = try await submit(pipeline, json.receiptData(), user: "bob")
            #expect(unreadable.status == .rejected && unreadable.reason == "invalid_receipt", "\(unreadable)")
            let unknown = SimulatedAppReceipt(
                bundleID: PipelineHarness.bundleID, purchases: [.init(transactionID: "2000000000000089", productID: "gold.100")])
            let ticket = try await submit(pipeline, unknown.receiptData(), user: "bob")
            #expect(ticket.status == .rejected && ticket.reason == "transaction_not_found", "\(ticket)")
            #expect(pipeline.simulator.requestCount == 0)
        }
    }

    @Test func serverAPIModeWithoutTheKeyIsAConfigurationError() throws {
        let configuration = try PipelineConfiguration(environment: ["IAP_RECEIPT_MODE": "server_api"])
        #expect(throws: ConfigurationError.self) { try configuration.receiptsByServerAPI() }
        #expect(try PipelineConfiguration(environment: ["IAP_RECEIPT_MODE": "auto"]).receiptsByServerAPI() == false)
        #expect(try PipelineConfiguration(environment: [:]).receiptsByServerAPI() == false)
    }
}
