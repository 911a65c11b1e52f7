import Foundation
import IAPIntake
import PipelineCore
import PipelineTestSupport
import Testing

/// The intake's HTTP contract: accepted receipts get a ticket at once; refused ones get a
/// precise 4xx (or 503) and nothing is queued.
@Suite(.serialized) struct IntakeTests {
    @Test func acceptsAReceiptWithATicketAndLocation() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let reply = try await pipeline.post(["receipt_data": receipt([gold("1")]).receiptData(), "user_id": "player 1"])
            #expect(reply.status == 202)
            let ticket = try #require(reply.json["ticket"] as? String)
            #expect(reply.json["status"] as? String == "queued")
            #expect(TicketID.isWellFormed(ticket))
            #expect(reply.headers["location"] == "/v1/receipts/\(ticket)")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
            let read = try await pipeline.get("/v1/receipts/\(ticket)")
            #expect(read.status == 200)
            #expect(read.json["status"] as? String == "queued")
            #expect(read.json["attempts"] as? Int == 0)
            #expect((read.json["transactions"] as? [Any])?.isEmpty == true)
            #expect(read.json["created_at"] is String && read.json["updated_at"] is String)
        }
    }

    @Test func aResubmissionReturnsTheSameTicketAndQueuesNothing() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let body: [String: Any] = ["receipt_data": receipt([gold("1")]).receiptData(), "user_id": "u"]
            let first = try await pipeline.post(body)
            let second = try await pipeline.post(body)
            #expect(first.status == 202 && second.status == 200)
            #expect(first.json["ticket"] as? String == second.json["ticket"] as? String)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
            // Another user with the same receipt is another submission (dedupe decides who gets it).
            let other = try await pipeline.post(["receipt_data": body["receipt_data"]!, "user_id": "someone-else"])
            #expect(other.status == 202 && other.json["ticket"] as? String != first.json["ticket"] as? String)
        }
    }

    static let badBodies: [(String, String, String)] = [
        ("not json", "malformed_json", "{"),
        ("an array", "malformed_json", "[1]"),
        ("no receipt", "missing_field", #"{"user_id": "u"}"#),
        ("null receipt", "missing_field", #"{"receipt_data": null, "user_id": "u"}"#),
        ("no user", "missing_field", #"{"receipt_data": "aGk="}"#),
        ("numeric receipt", "wrong_type", #"{"receipt_data": 5, "user_id": "u"}"#),
        ("numeric user", "wrong_type", #"{"receipt_data": "aGk=", "user_id": 7}"#),
        ("bool product", "wrong_type", #"{"receipt_data": "aGk=", "user_id": "u", "product_id": true}"#),
        ("bad base64", "invalid_base64", #"{"receipt_data": "***", "user_id": "u"}"#),
        ("empty receipt", "invalid_base64", #"{"receipt_data": "", "user_id": "u"}"#),
        ("empty user", "invalid_user_id", #"{"receipt_data": "aGk=", "user_id": ""}"#),
        ("control char user", "invalid_user_id", #"{"receipt_data": "aGk=", "user_id": "a\nb"}"#),
        ("long user", "invalid_user_id", #"{"receipt_data": "aGk=", "user_id": "\#(String(repeating: "x", count: 129))"}"#),
        ("empty product", "invalid_product_id", #"{"receipt_data": "aGk=", "user_id": "u", "product_id": ""}"#),
        ("lower-case currency", "invalid_currency", #"{"receipt_data": "aGk=", "user_id": "u", "currency": "usd"}"#),
        ("long currency", "invalid_currency", #"{"receipt_data": "aGk=", "user_id": "u", "currency": "USDT"}"#),
        ("numeric currency", "wrong_type", #"{"receipt_data": "aGk=", "user_id": "u", "currency": 840}"#),
        ("empty transaction", "invalid_transaction_id", #"{"receipt_data": "aGk=", "user_id": "u", "transaction_id": ""}"#),
        ("receipt and jws", "conflicting_fields", #"{"receipt_data": "aGk=", "signed_transaction": "e30.e30.c2ln", "user_id": "u"}"#),
        ("jws of two segments", "invalid_jws", #"{"signed_transaction": "e30.e30", "user_id": "u"}"#),
        ("jws with an empty segment", "invalid_jws", #"{"signed_transaction": "e30..c2ln", "user_id": "u"}"#),
        ("jws with padding", "invalid_jws", #"{"signed_transaction": "e30=.e30.c2ln", "user_id": "u"}"#),
        ("jws in standard base64", "invalid_jws", #"{"signed_transaction": "e3+/.e30.c2ln", "user_id": "u"}"#),
        ("empty jws", "invalid_jws", #"{"signed_transaction": "", "user_id": "u"}"#),
        ("numeric jws", "wrong_type", #"{"signed_transaction": 1, "user_id": "u"}"#),
        ("jws, bad user", "invalid_user_id", #"{"signed_transaction": "e30.e30.c2ln", "user_id": ""}"#),
        ("id alone, no Server API keys", "server_api_not_configured", #"{"transaction_id": "2000000000000001", "user_id": "u"}"#),
    ]

    @Test func refusesBadInputWithAPreciseCodeAndQueuesNothing() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            for (what, code, body) in Self.badBodies {
                let reply = try await pipeline.post(raw: Data(body.utf8))
                let error = reply.json["error"] as? [String: Any]
                #expect(reply.status == 400, "\(what)")
                #expect(error?["code"] as? String == code, "\(what)")
                #expect((error?["message"] as? String)?.isEmpty == false, "\(what)")
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0)
            #expect(try await pipeline.storedKeys() == [])
        }
    }

    @Test func refusesOtherContentTypesAndOversizedBodies() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let body = Data(#"{"receipt_data": "aGk=", "user_id": "u"}"#.utf8)
            let text = try await pipeline.post(raw: body, contentType: "text/plain")
            #expect(text.status == 415)
            #expect((text.json["error"] as? [String: Any])?["code"] as? String == "unsupported_media_type")
            let none = try await pipeline.post(raw: body, contentType: nil)
            #expect(none.status == 415)
            let charset = try await pipeline.post(raw: body, contentType: "application/json; charset=utf-8")
            #expect(charset.status == 202)
            let huge = Data(#"{"receipt_data": ""#.utf8) + Data(repeating: UInt8(ascii: "A"), count: 300 * 1024) + Data(#"", "user_id": "u"}"#.utf8)
            let tooLarge = try await pipeline.post(raw: huge)
            #expect(tooLarge.status == 413)
            #expect((tooLarge.json["error"] as? [String: Any])?["code"] as? String == "body_too_large")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }

    @Test func unknownAndMalformedTicketsAre404AndATraversalIsABadPath() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            for path in ["/v1/receipts/AAAAAAAAAAAAAAAAAAAAAA", "/v1/receipts/short"] {
                let reply = try await pipeline.get(path)
                #expect(reply.status == 404, "\(path)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == "ticket_not_found")
            }
            // A percent-encoded `.` or `/` never reaches the route.
            let traversal = try await pipeline.get("/v1/receipts/..%2F..%2Fetc")
            #expect(traversal.status == 400 && (traversal.json["error"] as? [String: Any])?["code"] as? String == "bad_path")
        }
    }

    @Test func refusesWith503WhileRedisIsDownAndAcceptsOnceItIsBack() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            #expect(try await pipeline.get("/healthz").status == 200)
            #expect(try await pipeline.get("/readyz").status == 200)
            pipeline.redisServer.kill()
            let body: [String: Any] = ["receipt_data": receipt([gold("1")]).receiptData(), "user_id": "u"]
            let refused = try await pipeline.post(body)
            #expect(refused.status == 503)
            #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "redis_unavailable")
            #expect(try await pipeline.get("/readyz").status == 503)
            #expect(try await pipeline.get("/healthz").status == 200)
            try await pipeline.redisServer.restart()
            // The client retries the same receipt later and gets one ticket.
            let accepted = try await pipeline.postUntilAccepted(body)
            #expect(accepted.status == 202)
            let again = try await pipeline.post(body)
            #expect(again.status == 200 && again.json["ticket"] as? String == accepted.json["ticket"] as? String)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }
}
