import AppStoreServerAPI
import AppleJWS
import AppleSimulator
import Foundation
@testable import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// `iapctl adopt import` (issue 54): what a studio's old system granted, taken into the books
/// with no event, so that a player's first sync grants none of it again.
@Suite(.serialized) struct AdoptionImportTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    static func row(
        _ user: String, _ original: String, product: String, transaction: String? = nil, date: String = "2025-03-01T10:00:00Z"
    ) -> String {
        var fields = ["user_id": user, "original_transaction_id": original, "product_id": product, "purchase_date": date]
        fields["transaction_id"] = transaction
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The step on its own, on a cluster node (its keys declared): imported once, seen again,
    /// another user's purchase left; the user's indexes as a grant writes them; no entry.
    @Test func aRowIsImportedOnceSeenAgainAndAnotherUsersIsLeft() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let engine = AdoptionImport(store: store, catalog: PipelineHarness.catalog)
            let file = [
                Self.row("ann", "300", product: "gold.100", transaction: "301"),
                Self.row("ann", "310", product: "level.pack", transaction: "311"),
                Self.row("ann", "320", product: "vip.monthly"),
                Self.row("bob", "300", product: "gold.100", transaction: "301"),
            ].joined(separator: "\n")
            let first = try await engine.run(Data(file.utf8))
            #expect((first.read, first.imported, first.seen, first.conflicts, first.invalid) == (4, 3, 0, 1, 0), "\(first)")
            #expect(first.problems == ["line 4: conflict: 301 of bob is user ann's: left"])
            #expect(try await redis.send("GET", Self.keys.claim(unit: "301")).string?.hasPrefix("import:") == true)
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "310")).stringDictionary
            #expect(record["user_id"] == "ann" && record["adopted"] == "1" && record["source"] == "import" && record["transaction_id"] == "311")
            #expect(try await redis.send("GET", Self.keys.owner(originalTransactionID: "320")).string == "ann")
            #expect(try await redis.send("SMEMBERS", Self.keys.lifetime(user: "ann")).array?.compactMap(\.string) == ["310"])
            #expect(try await redis.send("SMEMBERS", Self.keys.subscriptions(user: "ann")).array?.compactMap(\.string) == ["320"])
            #expect(try await redis.send("ZSCORE", Self.keys.purchases(user: "ann"), "301").string == String(Adoption.parse("2025-03-01T10:00:00Z")!))
            #expect(try await redis.send("EXISTS", Self.keys.fulfilment).int == 0)
            // Again: every row the books have is seen; the conflict stays one; nothing moves.
            let again = try await engine.run(Data(file.utf8))
            #expect((again.imported, again.seen, again.conflicts) == (0, 3, 1), "\(again)")
            #expect(try await redis.send("HGET", Self.keys.grant(unit: "301"), "user_id").string == "ann")
            // A dry run of a file with a new row: counted, not written.
            var dry = engine
            dry.dryRun = true
            let more = file + "\n" + Self.row("cy", "330", product: "gold.100")
            let read = try await dry.run(Data(more.utf8))
            #expect((read.imported, read.seen, read.conflicts, read.dryRun) == (1, 3, 1, true), "\(read)")
            #expect(try await redis.send("EXISTS", Self.keys.claim(unit: "330")).int == 0)
        }
    }

    /// Bad lines are counted and named, never fatal; a CSV file with a header reads the same.
    @Test func badLinesAreNamedAndTheRestImported() async throws {
        try await withClusterNode { redis, _ in
            let engine = AdoptionImport(store: PipelineStore(redis: redis, keys: Self.keys), catalog: PipelineHarness.catalog)
            let csv = """
                user_id,original_transaction_id,transaction_id,product_id,purchase_date,quantity
                dee,400,,gold.100,2025-01-01T00:00:00Z,3
                "dee, the second",401,,gold.100,2025-01-01T00:00:00Z,
                dee,402,,no.such.product,2025-01-01T00:00:00Z,1
                dee,403,,gold.100,last tuesday,1
                dee\u{7},404,,gold.100,2025-01-01T00:00:00Z,1
                dee,405,,gold.100,2025-01-01T00:00:00Z,-2
                dee,406,gold.100
                """
            let report = try await engine.run(Data(csv.utf8))
            #expect((report.read, report.imported, report.invalid) == (7, 2, 5), "\(report)")
            #expect(report.problems == [
                "line 4: invalid: product_id no.such.product is not in the catalog",
                "line 5: invalid: purchase_date is not an ISO 8601 time (like 2025-06-01T12:00:00Z)",
                "line 6: invalid: user_id must be 1 to 128 printable ASCII characters",
                "line 7: invalid: quantity must be a whole number from 1",
                "line 8: invalid: 3 cells, the header names 6",
            ])
            #expect(try await redis.send("HGET", Self.keys.grant(unit: "400"), "quantity").string == "3")
            #expect(try await redis.send("HGET", Self.keys.grant(unit: "401"), "user_id").string == "dee, the second")
            let ndjson = "{\"user_id\": \"eve\"\nnot json at all\n" + Self.row("eve", "410", product: "gold.100")
            let second = try await engine.run(Data(ndjson.utf8))
            #expect((second.read, second.imported, second.invalid) == (3, 1, 2), "\(second)")
            #expect(second.problems.allSatisfy { $0.hasSuffix("invalid: not a JSON object") })
        }
    }

    /// A stopped import of a file goes on where it got to: its place is kept after every batch.
    @Test func aStoppedImportGoesOnWhereItGotTo() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let rows = (0..<10).map { Self.row("fay", String(500 + $0), product: "gold.100") }
            let data = Data(rows.joined(separator: "\n").utf8)
            // As a run killed after its first batch of four left it: its place saved, those rows in.
            var engine = AdoptionImport(store: store, catalog: PipelineHarness.catalog)
            engine.batch = 4
            let digest = AdoptionImport.digest(of: data)
            _ = try await engine.run(Data(rows.prefix(4).joined(separator: "\n").utf8))
            try await engine.save(store.keys.adoptionImport(digest), line: 4, AdoptionImport.Report(read: 4, imported: 4))
            let resumed = try await engine.run(data)
            #expect(resumed.resumedAfter == 4 && resumed.read == 10 && resumed.imported == 10 && resumed.seen == 0, "\(resumed)")
            // Finished: its place is forgotten, and the next run reads every row again.
            #expect(try await redis.send("EXISTS", store.keys.adoptionImport(digest)).int == 0)
            let again = try await engine.run(data)
            #expect(again.resumedAfter == 0 && again.seen == 10)
        }
    }

    /// The player with two years of history, imported from a file by `iapctl adopt import` (the
    /// executable), syncs with zero `granted` events: every old purchase `duplicate` or `adopted`.
    @Test func anImportedPlayerSyncsWithNoGrantedEvent() async throws {
        let now = currentTimeMs()
        let cutover = now - 10 * AdoptionTests.day
        try await withPipeline(serverAPI: true, environment: ["IAP_ADOPTED_AT": AdoptionTests.iso(cutover)]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let history = try api.registerPlayer(AdoptionTests.player(first: 2_000_000_000_055_000, now: now))
            // What the old system granted: everything bought before the cutover, one subscription row.
            var lines: [String] = []
            for transaction in history where (transaction.purchaseDate ?? 0) < cutover {
                if transaction.productID == "vip.monthly" && transaction.transactionID != transaction.originalTransactionID { continue }
                lines.append(Self.row(
                    "pat", transaction.originalTransactionID, product: transaction.productID, transaction: transaction.transactionID,
                    date: AdoptionTests.iso(transaction.purchaseDate ?? 0)))
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("adopt-\(UUID().uuidString).ndjson")
            try Data(lines.joined(separator: "\n").utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let iapctl = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("iapctl")
            let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).json")
            try Data(PipelineHarness.catalogJSON.utf8).write(to: catalog)
            defer { try? FileManager.default.removeItem(at: catalog) }
            let (status, output) = try await runTool(iapctl.path, ["adopt", "import", file.path], environment: [
                "IAP_REDIS_URL": pipeline.redisServer.url, "IAP_PRODUCTS_FILE": catalog.path,
            ])
            #expect(status == 0 && output.contains("read 26, imported 26, seen 0, conflicts 0, invalid 0"), "\(output)")
            #expect(try await pipeline.fulfilments().isEmpty)

            // The dry run (`iapctl adopt report`): what a sync would do, read from Apple and the books.
            let client = try #require(pipeline.lookupClient)
            let reader = ServerAPICustomerHistory(client: client, signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()))
            guard case .valid(let receipt) = await reader.readAll(AdoptionTests.account, environment: "Production") else {
                Issue.record("Apple's history was not read")
                return
            }
            #expect(receipt.transactions.count == history.count)
            let dedupe = DedupeHandler(catalog: PipelineHarness.catalog, adoption: pipeline.configuration.adoption)
            let preview = try await SyncPreview.of(receipt, user: "pat", dedupe: dedupe, store: pipeline.store)
            #expect(preview.counts == [.known: 25, .adopt: 12, .grant: 1], "\(preview.counts)")
            #expect(preview.lines.filter { $0.fate == .known }.allSatisfy { $0.holder == "pat" })
            // The same from the executable.
            let settings = pipeline.configuration.serverAPI
            let key = try #require(settings.key)
            let report = try await runTool(iapctl.path, ["adopt", "report", "pat", "--app-transaction-id", AdoptionTests.account], environment: [
                "IAP_REDIS_URL": pipeline.redisServer.url, "IAP_PRODUCTS_FILE": catalog.path, "IAP_ADOPTED_AT": AdoptionTests.iso(cutover),
                "IAP_APPLE_API_PRODUCTION_URL": settings.productionURL, "IAP_APPLE_API_SANDBOX_URL": settings.sandboxURL,
                "IAP_APPLE_API_KEY_ID": key.keyID, "IAP_APPLE_API_ISSUER_ID": key.issuerID, "IAP_APPLE_API_PRIVATE_KEY_FILE": key.privateKeyFile,
                "IAP_BUNDLE_IDS": PipelineHarness.bundleID, "IAP_APPLE_ROOT_CERTS": pipeline.configuration.appleRootCertFiles.joined(separator: ","),
            ])
            #expect(report.status == 0 && report.output.contains("\(AdoptionTests.account): grant 1, adopt 12, hold 0, known 25, reject 0"), "\(report.output)")
            #expect(try await pipeline.fulfilments().isEmpty)

            let ticket = try await AdoptionTests().sync(pipeline, user: "pat")
            let outcomes = Dictionary(uniqueKeysWithValues: ticket.transactions.map { ($0.transactionID, $0.outcome) })
            let entries = try await pipeline.fulfilments()
            #expect(entries.filter { $0["event"] == "granted" }.isEmpty, "\(entries)")
            for transaction in history {
                let before = (transaction.purchaseDate ?? 0) < cutover
                let expected: Set<PurchaseOutcome> = before ? [.duplicate, .adopted] : [.granted]
                #expect(outcomes[transaction.transactionID].map(expected.contains) == true, "\(transaction.transactionID): \(outcomes)")
            }
            // The imported ones are the books' own: duplicates; the subscription's old periods adopted to its owner.
            #expect(history.filter { $0.productID != "vip.monthly" }.allSatisfy { outcomes[$0.transactionID] == .duplicate })
            #expect(entries.filter { $0["event"] == "renewed" }.map { $0["user_id"] } == ["pat"])
            #expect(entries.filter { $0["event"] == "adopted" }.allSatisfy { $0["product_id"] == "vip.monthly" && $0["user_id"] == "pat" })
        }
    }
}
