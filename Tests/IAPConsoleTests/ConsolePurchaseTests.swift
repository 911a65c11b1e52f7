import AppleJWS
import Foundation
import IAPOperations
import PipelineCore
import PipelineTestSupport
import PlainJSON
import Testing

/// One search box to a purchase's whole story: found by transaction id, original transaction
/// id or a notification's UUID, told in order (submitted, claimed, held and decided, granted,
/// refunded), each step saying what the viewer's role may do next.
@Suite(.serialized) struct ConsolePurchaseTests {
    @Test func aGrantedThenRefundedPurchaseIsFoundByItsIdsAndToldInOrder() async throws {
        try await ConsoleHarness.withConsole { pipeline, console in
            let api = pipeline.simulator.serverAPI
            let jws = try api.register(SignedFixture.consumable("4000000000000971"))
            let ticket = try await pipeline.submit(signed: jws, user: "story-player")
            #expect(try await pipeline.terminal(ticket).status == .granted)
            let duplicate = try await pipeline.submit(signed: jws, user: "someone-else")
            #expect(try await pipeline.terminal(duplicate).status == .duplicate)
            // Apple declined a refund first (a notification that changes no grant), then granted one.
            let declined = try await pipeline.notify(try api.signedNotification(type: "REFUND_DECLINED", transactionID: "4000000000000971"))
            _ = try await pipeline.terminal(try #require(declined.json["ticket"] as? String))
            let refund = try api.signedNotification(type: "REFUND", transactionID: "4000000000000971")
            let reply = try await pipeline.notify(refund)
            let applied = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            #expect(applied.result == "revoked")
            let payload = try #require(Base64URL.decode(refund.split(separator: ".")[1]))
            let uuid = try #require(try JSONValue(parsing: String(decoding: payload, as: UTF8.self))["notificationUUID"]?.string)

            let vera = try await console.signIn("vera")
            let found = try await console.send(.GET, "/search?q=4000000000000971", cookie: vera)
            #expect(found.body.contains("href=\"/purchases/4000000000000971\"") && found.body.contains("revoked"), "\(found.body)")
            let story = try await console.send(.GET, "/purchases/4000000000000971", cookie: vera)
            #expect(story.status == 200)
            let order = ["<strong>submitted</strong>", "<strong>claimed</strong>", "<strong>granted</strong>", "<strong>revoked</strong>"]
            let positions = order.compactMap { story.body.range(of: $0)?.lowerBound }
            #expect(positions.count == 4 && positions == positions.sorted(), "\(story.body)")
            #expect(story.body.contains("ticket \(ticket)") && story.body.contains("to story-player") && story.body.contains("href=\"/users/story-player\""))
            #expect(!story.body.contains("someone-else"), "the duplicate claimed nothing")
            #expect(!story.body.contains(jws), "never the evidence")
            let json = try JSONValue(parsing: try await console.send(.GET, "/purchases/4000000000000971", cookie: vera, headers: [("Accept", "application/json")]).body)
            #expect(json["steps"]?.array?.compactMap { $0["what"]?.string } == ["submitted", "claimed", "granted", "revoked", "Apple said"], "\(json)")
            #expect(story.body.contains("REFUND_DECLINED"))
            #expect(json["iapctl"]?.string == "iapctl lookup transaction 4000000000000971")
            #expect(json["steps"]?.array?.first?["at"]?.string?.hasPrefix("20") == true, "the submission's time is shown")

            let byNotification = try await console.send(.GET, "/search?q=\(uuid.uppercased())", cookie: vera)
            #expect(byNotification.body.contains("notification \(uuid.uppercased())") && byNotification.body.contains("href=\"/tickets/"), "\(byNotification.body)")
            let userPage = try await console.send(.GET, "/users/story-player", cookie: vera)
            #expect(userPage.body.contains("<a href=\"/purchases/4000000000000971\">4000000000000971</a>"), "the user's purchases link their stories")
            let ticketPage = try await console.send(.GET, "/tickets/\(ticket)", cookie: vera)
            #expect(ticketPage.body.contains("href=\"/purchases/4000000000000971\""))
            #expect(try await console.send(.GET, "/purchases/4000000000000000", cookie: vera).status == 404)
            #expect(try await console.send(.GET, "/purchases/%00bad", cookie: vera).status == 404)
        }
    }

    @Test func aHeldPurchaseSaysWhoMayDecideAndThenWhoDid() async throws {
        try await ConsoleHarness.withConsole(environment: ["IAP_CURRENCIES": "USD"]) { pipeline, console in
            let jws = try pipeline.authority.signer.sign(payload: SignedFixture.sold("2000000000000981", currency: "RUB"))
            let reply = try await pipeline.post(["signed_transaction": jws, "user_id": "held-story"])
            #expect(try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true).status == .held)
            let vera = try await console.signIn("vera")
            let seen = try await console.send(.GET, "/purchases/2000000000000981", cookie: vera)
            #expect(seen.body.contains("currency_not_allowed") && seen.body.contains("An operator may release or reject it."), "\(seen.body)")
            let oscar = try await console.signIn("oscar")
            #expect(try await console.send(.GET, "/purchases/2000000000000981", cookie: oscar).body.contains("You may release or reject it"))
            #expect(try await console.send(.POST, "/held/2000000000000981/release", form: "note=checked+with+the+player", cookie: oscar).status == 200)
            let decided = try await console.send(.GET, "/purchases/2000000000000981", cookie: vera)
            #expect(decided.body.contains("<strong>released</strong>") && decided.body.contains("by oscar: “checked with the player”"), "\(decided.body)")
            #expect(decided.body.contains("<strong>granted</strong>") && !decided.body.contains("may release"))
        }
    }
}

/// Support's desk in the browser: an order id from the player's email receipt looked up at
/// Apple (apple-sim) on request, each purchase as the books hold it, and the one nobody was
/// granted granted through the pipeline, once; a viewer may do neither.
@Suite(.serialized) struct ConsoleSupportTests {
    @Test func supportFindsAnOrderAtAppleAndGrantsWhatNeverArrivedOnce() async throws {
        try await ConsoleHarness.withConsole(serverAPI: true) { pipeline, console in
            let api = pipeline.simulator.serverAPI
            let sent = try api.register(ConsoleSupportTests.transaction("5100000000000991"), orderID: "MK5TZ8Q991")
            try api.register(ConsoleSupportTests.transaction("5100000000000992"), orderID: "MK5TZ8Q991")
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: sent, user: "player-9")).status == .granted)

            let vera = try await console.signIn("vera")
            let viewerSearch = try await console.send(.GET, "/search?q=MK5TZ8Q991", cookie: vera)
            #expect(!viewerSearch.body.contains("/lookup?"), "a viewer is not offered Apple's look-up")
            #expect(try await console.send(.GET, "/lookup?kind=order&id=MK5TZ8Q991", cookie: vera).status == 403)
            #expect(try await console.send(.POST, "/lookup/grant", form: "transaction=5100000000000992&user=player-9", cookie: vera).status == 403)

            let sam = try await console.signIn("sam")
            let search = try await console.send(.GET, "/search?q=MK5TZ8Q991", cookie: sam)
            #expect(search.body.contains("href=\"/lookup?kind=order&amp;id=MK5TZ8Q991\"") && !search.body.contains("kind=transaction"), "\(search.body)")
            let found = try await console.send(.GET, "/lookup?kind=order&id=MK5TZ8Q991", cookie: sam)
            #expect(found.status == 200 && found.body.contains("5100000000000991") && found.body.contains("5100000000000992"), "\(found.body)")
            #expect(found.body.contains("granted · <a href=\"/purchases/5100000000000991\">"))
            let forms = found.body.components(separatedBy: "action=\"/lookup/grant\"").count - 1
            #expect(forms == 1 && found.body.contains("name=\"transaction\" value=\"5100000000000992\""), "only the purchase nobody was granted")
            #expect(found.body.contains("<code>iapctl lookup order MK5TZ8Q991 --grant-to USER</code>"))

            let granted = try await console.send(.POST, "/lookup/grant", form: "transaction=5100000000000992&user=player-9", cookie: sam)
            #expect(granted.status == 202 && granted.body.contains("Submitted"), "\(granted.body)")
            let ticket = try #require(granted.body.range(of: #"/tickets/[A-Za-z0-9._-]+"#, options: .regularExpression).map { String(granted.body[$0].dropFirst(9)) })
            #expect(try await pipeline.terminal(ticket).status == .granted)
            let again = try await console.send(.POST, "/lookup/grant", form: "transaction=5100000000000992&user=player-9", cookie: sam)
            #expect(again.status == 200 && again.body.contains("Asked before") && again.body.contains(ticket))
            let grants = try await pipeline.fulfilments().filter { $0["event"] == "granted" && $0["transaction_id"] == "5100000000000992" }
            #expect(grants.count == 1 && grants.first?["source"] == "support" && grants.first?["user_id"] == "player-9")

            #expect(try await console.send(.GET, "/lookup?kind=order&id=NOSUCHORDER9", cookie: sam).status == 404)
            #expect(try await console.send(.GET, "/lookup?kind=order&id=MK5-TZ8", cookie: sam).status == 400)
            #expect(try await console.send(.POST, "/lookup/grant", form: "transaction=abc&user=player-9", cookie: sam).status == 400)
            #expect(try await console.send(.POST, "/lookup/grant", form: "transaction=%C2%BD12&user=player-9", cookie: sam).status == 400, "½ is no digit")
        }
    }

    static func transaction(_ id: String) -> JWSTransaction {
        JWSTransaction(
            transactionID: id, originalTransactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100",
            purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", environment: "Production")
    }
}
