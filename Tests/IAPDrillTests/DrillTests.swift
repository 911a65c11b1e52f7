import AppleJWS
import AppleSimulator
import AsyncHTTPClient
import Foundation
import IAPClient
import IAPIntake
import PipelineCore
import IAPStages
import IAPOperations
import LoopbackPort
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import RedisClient
import Testing
import TestSupport

@testable import ClusterHarness
@testable import IAPBench
@testable import IAPDrill

#if canImport(Glibc)
import Glibc
#endif

/// The drill against the executables `swift test` just built: real processes, real faults.
@Suite(.serialized, .takingTurns)
struct DrillTests {
    /// The test binary sits next to the package's executables.
    static var settings: DrillSettings {
        let bin = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("iap-drill-\(UUID().uuidString)")
        var settings = DrillSettings(binDirectory: bin, workDirectory: work)
        settings.trials = 1
        settings.processesPerStage = 2
        // The drills below turn the webhook on; the cluster tests run without it.
        settings.webhooks = false
        return settings
    }

    @Test func aShortDrillWithEveryFaultKeepsTheBooks() async throws {
        var settings = Self.settings
        settings.webhooks = true
        settings.receiptsPerTrial = 300
        settings.submitRate = 60
        settings.faultRate = 2
        settings.seed = 7
        defer { try? FileManager.default.removeItem(at: settings.workDirectory) }
        let report = try #require(try await Drill(settings: settings).run().first)
        #expect(FaultKind.all(for: .single).allSatisfy { report.faults[$0, default: 0] >= 1 }, "\(report.faults)")
        #expect(report.accepted > 200)
        // StoreKit 2 purchases and refunds (some before their grant) were part of the trial.
        #expect(report.storeKit > 0 && report.refundsRevoked + report.refundsBeforeGrant > 0, "\(report)")
        // Subscriptions apple-sim renewed without the client: every period granted once (each has at least one renewal).
        #expect(report.subscriptions == 12 && report.periods >= 24, "\(report.examples)")
        // Every fulfilment event reached the webhook receiver through the kills, some more than once.
        #expect(report.webhookDelivered > 100, "\(report)")
        #expect(report.lost == 0, "\(report.examples)")
        #expect(report.doubleGrants == 0, "\(report.examples)")
        // Four players with two years of history before the cutover, half imported, synced under the faults: nothing granted again.
        #expect(report.adoptionPlayers == 4 && report.grantedBeforeCutover == 0, "\(report.examples)")
        #expect(report.stuck == 0, "\(report.examples)")
        #expect(report.wrongOutcomes == 0, "\(report.examples)")
        #expect(report.anomalies == 0, "\(report.examples)")
        #expect(report.poisonPushed > 0 && report.poisonDeadLettered == report.poisonPushed)
    }

    /// A fleet started with a sentinel URL and `IAP_REDIS_MIN_REPLICAS=1` (the intake, two
    /// processes per stage) on a primary, two replicas and three sentinels: the primary is killed
    /// twice while receipts come in, the sentinels promote a replica each time, and no process is
    /// restarted (one that exits is an anomaly). Every acknowledged receipt ends as its scenario
    /// dictates, none twice.
    @Test func aFleetOnSentinelsFollowsTwoFailoversAndKeepsTheBooks() async throws {
        var settings = Self.settings
        settings.topology = .sentinel
        settings.faults = [.failover]
        settings.faultsPerKind = 2
        settings.receiptsPerTrial = 300
        settings.submitRate = 30
        settings.faultRate = 0.5
        settings.seed = 11
        // The adoption trial runs here too: a sync whose history read failed in a failover once came
        // back as a plain binding and lost an adopted player's purchases (SyncTests has it alone).
        defer { try? FileManager.default.removeItem(at: settings.workDirectory) }
        #expect(settings.cluster.minReplicas == 1)
        let report = try #require(try await Drill(settings: settings).run().first)
        // Faults go on while the trial's load and its adoption run: at least two on a busy machine, each timed.
        #expect(report.faults[.failover, default: 0] >= 2 && report.failovers.count == report.faults[.failover], "\(report.faults)")
        #expect(report.accepted > 200)
        #expect(report.lost == 0, "\(report.examples)")
        #expect(report.doubleGrants == 0, "\(report.examples)")
        #expect(report.stuck == 0, "\(report.examples)")
        #expect(report.wrongOutcomes == 0, "\(report.examples)")
        #expect(report.anomalies == 0, "\(report.examples)")
        #expect(DrillTable.render([report], faults: settings.faults).contains("kill→grant s"))
    }

    /// A fleet on a Redis Cluster (3 primaries with a replica each; `redis-cluster://`,
    /// `IAP_PREFIX={iap}`, `IAP_REDIS_MIN_REPLICAS=1`): while receipts come in, the primary of the
    /// pipeline's slot is killed twice (its replica takes over) and the slot moves twice, once by
    /// hand held half-moved (so commands meet `ASK` and `TRYAGAIN`) and once by `redis-cli
    /// --cluster reshard`. No process is restarted; every acknowledged receipt ends as its
    /// scenario dictates, none twice.
    @Test func aFleetOnAClusterFollowsFailoversAndSlotMovesAndKeepsTheBooks() async throws {
        var settings = Self.settings
        settings.topology = .cluster
        settings.faults = [.failover, .reshard]
        settings.faultsPerKind = 2
        settings.receiptsPerTrial = 300
        settings.submitRate = 30
        settings.faultRate = 0.5
        settings.seed = 13
        defer { try? FileManager.default.removeItem(at: settings.workDirectory) }
        #expect(settings.cluster.minReplicas == 1)
        let report = try #require(try await Drill(settings: settings).run().first)
        // Faults go on while the trial's load and its adoption run: at least two on a busy machine, each timed.
        #expect(report.faults[.failover, default: 0] >= 2 && report.failovers.count == report.faults[.failover], "\(report.faults)")
        #expect(report.reshards.count >= 2 && Set(report.reshards.map(\.by)) == ["half-moved", "redis-cli"], "\(report.reshards)")
        #expect(report.reshards.allSatisfy { $0.keys > 0 }, "\(report.reshards)")
        #expect(report.accepted > 200)
        #expect(report.lost == 0, "\(report.examples)")
        #expect(report.doubleGrants == 0, "\(report.examples)")
        #expect(report.stuck == 0, "\(report.examples)")
        #expect(report.wrongOutcomes == 0, "\(report.examples)")
        #expect(report.anomalies == 0, "\(report.examples)")
        #expect(DrillTable.render([report], faults: settings.faults).contains("moved keys"))
    }

    @Test func aClusterNodesLineGivesItsSlotsButNotOneBeingMoved() {
        let line: Substring = "07c3 127.0.0.1:30004@40004 myself,master - 0 0 1 connected 0-3 886 5461-5462 [887->-a1b2]"
        #expect(LocalCluster.slots(inNodesLine: line) == [0, 1, 2, 3, 886, 5461, 5462])
        #expect(LocalCluster.slots(inNodesLine: "e1f2 127.0.0.1:30005@40005 slave 07c3 0 0 1 connected").isEmpty)
    }

    @Test func aWorkersPidIsReadFromItsIDWhateverItsHostIsCalled() {
        #expect(LocalCluster.pid(ofMember: "verify:box-4321-1x9z") == 4321)
        #expect(LocalCluster.pid(ofMember: "grant:ip-10-0-12-7-88-abc") == 88)
        #expect(LocalCluster.pid(ofMember: "dedupe:box") == nil)
    }

    /// A Redis crash right after 40 receipts were accepted: with the AOF nothing is lost (a
    /// process crash leaves the kernel its writes, so `everysec` survives it too once Redis has
    /// written them; `always` also survives a power cut); without persistence every ticket is
    /// gone, and the audit counts each one as lost. (With `everysec` on a slow disk Redis holds
    /// its writes back while an fsync runs, up to 2 s, and answers meanwhile: a CI run lost all 40
    /// that way. So there the crash waits until Redis has written its buffer.)
    @Test(arguments: [
        (Durability.always, RedisCrash.process, false), (.everysec, .process, false), (.none, .process, true),
        (.always, .powerCut, false),
    ])
    func aRedisCrashLosesAcceptedTicketsOnlyWithoutPersistence(
        durability: Durability, crash: RedisCrash, losesTickets: Bool
    ) async throws {
        var settings = Self.settings
        settings.durability = durability
        settings.redisCrash = crash
        settings.processesPerStage = 1
        try await withCluster(settings) { cluster, http, store in
            let books = try await crashRedisAfterAccepting(
                40, batch: 0, afterTheAOFWrite: durability == .everysec && crash == .process, cluster: cluster, http: http,
                store: store)
            #expect(books.lost == (losesTickets ? 40 : 0), "\(books.examples)")
            #expect(books.doubleGrants == 0 && books.wrong == 0 && books.stuck == 0, "\(books.examples)")
        }
    }

    /// With `everysec`, a power cut loses what Redis acknowledged in its last second: the intake's
    /// 202 came before the fsync. What survives is a consistent earlier state that drains cleanly.
    /// (A crash lands after an fsync that covered every ticket only rarely, so up to 3 tries.)
    @Test func aPowerCutWithEverysecLosesTheLastAcceptedTickets() async throws {
        var settings = Self.settings
        settings.durability = .everysec
        settings.redisCrash = .powerCut
        settings.processesPerStage = 1
        try await withCluster(settings) { cluster, http, store in
            var lost: [Int] = []
            for round in 0..<3 where lost.allSatisfy({ $0 == 0 }) {
                let books = try await crashRedisAfterAccepting(40, batch: round, cluster: cluster, http: http, store: store)
                #expect(books.doubleGrants == 0 && books.wrong == 0 && books.stuck == 0, "\(books.examples)")
                lost.append(books.lost)
            }
            #expect(lost.contains { $0 > 0 }, "lost per try: \(lost)")
        }
    }

    /// Submits `count` new receipts (`batch` keeps them apart from earlier ones), `kill -9`s Redis as
    /// soon as the last is accepted (`afterTheAOFWrite`: and Redis has written its AOF buffer),
    /// restarts it, waits for the drain and checks those receipts' books.
    private func crashRedisAfterAccepting(
        _ count: Int, batch: Int, afterTheAOFWrite: Bool = false, cluster: LocalCluster, http: HTTPClient,
        store: PipelineStore
    ) async throws -> TrialAudit.Books {
        let plan = (0..<count).map { PlannedReceipt.valid(index: $0, trial: batch) }
        let submissions = await cluster.loadClient(http).submitAll(plan, perSecond: 1000, concurrency: 8)
        if afterTheAOFWrite { try await cluster.waitUntilTheAOFIsWritten() }
        try await cluster.crashRedis(pauseMs: 0)
        let tickets = submissions.map(\.ticket)
        #expect(tickets.allSatisfy { $0 != nil })
        let audit = TrialAudit(store: store, lease: Self.settings.lease)
        let (terminal, _) = await audit.drain(Set(tickets.compactMap { $0 }), timeout: .seconds(60))
        return try await audit.check(plan: plan, tickets: tickets, terminal: terminal)
    }

    /// SIGTERM to a verifier holding 5 jobs: it finishes or hands back each and exits 0; its
    /// replacement completes the rest, and every purchase is granted once.
    @Test func aSigtermedVerifierWithJobsInFlightExitsCleanAndLosesNone() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        settings.appleLatencyMs = 600
        try await withCluster(settings) { cluster, http, store in
            let plan = (0..<5).map { PlannedReceipt.valid(index: $0) }
            let tickets = await cluster.loadClient(http)
                .submitAll(plan, perSecond: 1000, concurrency: 5).compactMap(\.ticket)
            #expect(tickets.count == 5)
            try await waitUntil { try await store.stats(lease: .milliseconds(1000)).inflight["verify"] == 5 }
            let held = try await cluster.jobsHeld()
            #expect(held.first { $0.stage == .verify }?.jobs == 5, "\(held)")
            #expect(held.filter { $0.stage != .verify }.allSatisfy { $0.jobs == 0 }, "\(held)")
            let (_, exit) = try await cluster.replaceWorker(.verify, at: 0, signal: SIGTERM, pauseMs: 0)
            #expect(exit.isClean, "\(exit)")
            let audit = TrialAudit(store: store, lease: settings.lease)
            let (terminal, _) = await audit.drain(Set(tickets), timeout: .seconds(60))
            let books = try await audit.check(plan: plan, tickets: tickets, terminal: terminal)
            #expect(books.lost == 0 && books.doubleGrants == 0 && books.wrong == 0 && books.stuck == 0, "\(books.examples)")
            #expect(terminal.values.allSatisfy { $0.status == .granted })
            #expect(try await store.redis.send("XLEN", store.keys.fulfilment) == .integer(5))
        }
    }

    /// A worker with `IAP_METRICS_PORT` (as the compose file runs it): before its first job its
    /// `/metrics` already has its stage's counters at 0 (so `rate()` and alerts work on a quiet
    /// stage), and SIGTERM ends it with exit code 0.
    @Test func aWorkerWithAMetricsPortReportsZerosBeforeItsFirstJobAndExitsCleanOnSigterm() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        try await withCluster(settings) { cluster, http, _ in
            let port = try LoopbackPort.free()
            let worker = try await cluster.launch(
                "iap-deduper", settings.binDirectory.appendingPathComponent("iap-deduper"),
                environment: ["IAP_METRICS_PORT": String(port)])
            var text = ""
            try await waitUntil {
                let reply = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(2))
                text = String(buffer: try await reply.body.collect(upTo: 1 << 22))
                return reply.status == .ok
            }
            for line in [
                #"iap_jobs_total{stage="dedupe",outcome="claim_purchases"} 0"#,
                #"iap_redis_errors_total{stage="dedupe"} 0"#,
                #"iap_dead_letters_total{stage="dedupe",reason="ticket_missing"} 0"#,
                #"iap_reaped_total{what="workers"} 0"#,
            ] {
                #expect(text.contains(line), "\(line) missing from:\n\(text)")
            }
            #expect(text.contains(#"iap_job_duration_seconds_count{stage="dedupe"} 0"#), "\(text)")
            let exit = await worker.stop(with: SIGTERM)
            #expect(exit.isClean, "\(exit): \(worker.logTail())")
        }
    }

    /// Redis gone for 2 s: no process crashes or spins on reconnects, the intake is not ready and
    /// refuses with 503, and a client that keeps resending its receipt gets one ticket, granted once
    /// Redis is back.
    @Test func duringARedisOutageEveryProcessWaitsQuietlyAndTheIntakeRefuses() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        try await withCluster(settings) { cluster, http, store in
            let client = cluster.loadClient(http)
            #expect(await client.submit(PlannedReceipt.valid(index: 0)).ticket != nil)
            await cluster.killRedis()
            try await waitUntil { await Self.status(http, cluster.intakeURL + "/readyz") == 503 }
            let pipeline = await cluster.processesByKind().filter { $0.key.hasPrefix("iap-") }.values.flatMap { $0 }
            #expect(pipeline.count == 1 + settings.cluster.processesPerStage.count, "the intake and one process per stage")
            let before = pipeline.map { ProcessUsage.read(pid: $0.pid)?.cpuSeconds ?? 0 }
            let resent = Task { await client.submit(PlannedReceipt.valid(index: 1)) }
            // An observation window, not a wait for an event: what the processes do while Redis is away.
            try await Task.sleep(for: .seconds(2))
            for (process, start) in zip(pipeline, before) {
                #expect(process.isRunning, "\(process.name) exited during the outage")
                // A process spinning on reconnects would burn most of the 2 s; backoff costs a few ms.
                let used = (ProcessUsage.read(pid: process.pid)?.cpuSeconds ?? 0) - start
                #expect(used < 0.5, "\(process.name) used \(used) s of CPU in 2 s without Redis")
            }
            try await cluster.heal()
            try await waitUntil { await Self.status(http, cluster.intakeURL + "/readyz") == 200 }
            let submission = await resent.value
            #expect(submission.refusals >= 1)
            let ticket = try #require(submission.ticket, "\(submission.error ?? "")")
            let audit = TrialAudit(store: store, lease: settings.lease)
            let (terminal, _) = await audit.drain([ticket], timeout: .seconds(60))
            #expect(terminal[ticket]?.status == .granted)
            #expect(await client.submit(PlannedReceipt.valid(index: 1)).ticket == ticket)
            #expect(await cluster.crashes().isEmpty)
        }
    }

    /// The intake started with `IAP_CLIENT_KEYS_FILE` rereads the file on SIGHUP: the key it
    /// names now signs, the one it no longer names is refused, and the intake keeps running.
    @Test func theIntakeRereadsItsClientKeysOnSighup() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        try await withCluster(settings) { cluster, http, _ in
            let old = try #require(cluster.settings.clientSigner)
            let intake = try #require(await cluster.processesByKind()["iap-intake"]?.first)
            #expect(await cluster.loadClient(http).submit(PlannedReceipt.valid(index: 0)).ticket != nil)
            let unsigned = await LoadClient(http: http, intakeURL: cluster.intakeURL).submit(PlannedReceipt.valid(index: 1))
            #expect(unsigned.ticket == nil && unsigned.error?.contains("unauthenticated") == true, "\(unsigned.error ?? "")")

            let rotated = RequestSigner(keyID: "rotated", secret: "rotated-secret-0123456789")
            try Data(rotated.keysFile.utf8).write(to: cluster.clientKeysFile)
            intake.signal(SIGHUP)
            try await waitUntil { (try String(contentsOf: intake.log, encoding: .utf8)).contains("client keys reloaded") }
            let refused = await LoadClient(http: http, intakeURL: cluster.intakeURL, signer: old).submit(PlannedReceipt.valid(index: 1))
            #expect(refused.ticket == nil && refused.error?.contains("unauthenticated") == true, "\(refused.error ?? "")")
            let accepted = await LoadClient(http: http, intakeURL: cluster.intakeURL, signer: rotated).submit(PlannedReceipt.valid(index: 1))
            #expect(accepted.ticket != nil, "\(accepted.error ?? "")")
            #expect(intake.isRunning)
        }
    }

    private static func status(_ http: HTTPClient, _ url: String) async -> UInt? {
        try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(2)).status.code
    }

    /// Real processes, StoreKit 2 and the Server API: two verifiers with `IAP_APPLE_API_MAX_RPS=10`
    /// look up 40 transaction ids and apple-sim never sees more than 10 calls in any second; a
    /// signed transaction is granted; a refund delivered three times revokes it once.
    @Test func twoVerifiersShareTheServerAPIBudgetAndARefundRevokesOnce() async throws {
        var settings = Self.settings
        settings.processesPerStage = 2
        settings.appleAPIMaxRPS = 10
        settings.appleLatencyMs = 0
        try await withCluster(settings) { cluster, http, store in
            func transaction(_ id: String) -> JWSTransaction {
                JWSTransaction(
                    transactionID: id, bundleID: LocalCluster.bundleID, productID: "drill.gold",
                    purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", environment: "Production")
            }
            func post(_ body: [String: String]) async throws -> String {
                var request = HTTPClientRequest(url: cluster.intakeURL + "/v1/receipts")
                request.method = .POST
                request.headers.add(name: "content-type", value: "application/json")
                let bytes = try JSONSerialization.data(withJSONObject: body)
                if let signer = cluster.settings.clientSigner {
                    request.headers.add(
                        contentsOf: signer.headers(
                            method: "POST", target: "/v1/receipts", body: bytes, timestamp: Int64(Date().timeIntervalSince1970)))
                }
                request.body = .bytes(ByteBuffer(data: bytes))
                let response = try await http.execute(request, timeout: .seconds(10))
                let reply = try await response.body.collect(upTo: 1 << 16)
                #expect(response.status == .accepted)
                return try #require((try JSONSerialization.jsonObject(with: Data(buffer: reply)) as? [String: Any])?["ticket"] as? String)
            }
            var tickets: [String] = []
            for index in 0..<40 {
                let id = "sk2-\(index)"
                _ = try await cluster.registerTransaction(transaction(id))
                tickets.append(try await post(["transaction_id": id, "user_id": "player-\(index)"]))
            }
            let signed = try await cluster.registerTransaction(transaction("sk2-signed"))
            tickets.append(try await post(["signed_transaction": signed, "user_id": "player-signed"]))
            try await waitUntil {
                var done = 0
                for ticket in tickets where try await store.ticket(ticket)?.status.isTerminal == true { done += 1 }
                return done == tickets.count
            }
            for ticket in tickets {
                let finished = try await store.ticket(ticket)
                #expect(finished?.status == .granted, "\(String(describing: finished))")
            }
            let busiest = try await cluster.busiestAPISecond()
            // 10 a second by Redis's clock for the two of them (unshared, 20): a call permitted at a
            // second's end may reach apple-sim in the next one on a loaded machine (once 11 were seen).
            #expect(busiest["Production transaction_info"].map { (1...15).contains($0) } == true, "\(busiest)")
            // A refund delivered three times (the same UUID): one revoked event.
            #expect(try await cluster.deliverNotification(type: "REFUND", transactionID: "sk2-signed", times: 3) == [200, 200, 200])
            let unit = cluster.keys.grant(unit: "sk2-signed", originalTransactionID: "sk2-signed")
            try await waitUntil { try await store.redis.send("HEXISTS", unit, "revoked_at").int == 1 }
            let events = try await store.redis.send("XRANGE", cluster.keys.fulfilment, "-", "+").array ?? []
            let revoked = events.filter { entry in
                let fields = entry.array?.last?.stringDictionary ?? [:]
                return fields["event"] == "revoked" && fields["transaction_id"] == "sk2-signed"
            }
            #expect(revoked.count == 1)
        }
    }

    /// A verifier paused past its lease loses its jobs to the reaper and another verifier; when it
    /// resumes, every ack it tries finds the job gone from its in-flight list, so nothing moves twice.
    @Test func aStalledVerifierCannotAckWhatTheReaperTookFromIt() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        settings.lease = .milliseconds(1000)
        settings.appleLatencyMs = 600
        try await withCluster(settings) { cluster, http, store in
            let plan = (0..<5).map { PlannedReceipt.valid(index: $0) }
            let stalled = try #require(await cluster.worker(.verify, at: 0))
            let tickets = await cluster.loadClient(http)
                .submitAll(plan, perSecond: 1000, concurrency: 5).compactMap(\.ticket)
            #expect(tickets.count == 5)
            try await waitUntil { try await store.stats(lease: .milliseconds(1000)).inflight["verify"] == 5 }
            stalled.signal(SIGSTOP)
            // The reaper (run by the deduper or granter) returns the jobs to the queue…
            try await waitUntil { try await store.stats(lease: .milliseconds(1000)).queues["verify"] == 5 }
            // …and a second verifier takes them and finishes them.
            _ = try await cluster.addWorker(.verify)
            let audit = TrialAudit(store: store, lease: settings.lease)
            let (terminal, _) = await audit.drain(Set(tickets), timeout: .seconds(60))
            stalled.signal(SIGCONT)
            // Each of the five stale handlers finds its job gone and says so (a BLMOVE it had
            // pending may also have been served a job while it was paused: that one is reaped again).
            try await waitUntil {
                (try String(contentsOf: stalled.log, encoding: .utf8)).components(separatedBy: "lost the lease").count - 1 >= 5
            }
            let books = try await audit.check(plan: plan, tickets: tickets, terminal: terminal)
            #expect(books.lost == 0 && books.doubleGrants == 0 && books.wrong == 0 && books.stuck == 0, "\(books.examples)")
            #expect(terminal.values.allSatisfy { $0.status == .granted })
            #expect(try await store.redis.send("XLEN", store.keys.fulfilment) == .integer(5))
            for ticket in tickets {
                let redeliveries = try await store.redis.send("HGET", store.keys.ticket(ticket), "redeliveries").string.flatMap { Int($0) }
                #expect((redeliveries ?? 0) >= 1)
            }
            #expect(stalled.isRunning)
        }
    }

    private func withCluster(
        _ settings: DrillSettings, adjust: (inout ClusterSettings) -> Void = { _ in }, afterStop: () throws -> Void = {},
        _ body: (LocalCluster, HTTPClient, PipelineStore) async throws -> Void
    ) async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var clusterSettings = settings.cluster
        adjust(&clusterSettings)
        let cluster = try LocalCluster(settings: clusterSettings, directory: settings.workDirectory, http: http)
        let redis = RedisClient(configuration: try RedisConfiguration(url: cluster.redisURL), poolSize: 2)
        do {
            try await cluster.start()
            try await body(cluster, http, PipelineStore(redis: redis, keys: cluster.keys))
        } catch {
            await redis.close()
            _ = await cluster.stop()
            try? await http.shutdown()
            throw error
        }
        await redis.close()
        let unclean = await cluster.stop()
        #expect(unclean.isEmpty, "\(unclean)")
        #expect(await cluster.crashes().isEmpty)
        try await http.shutdown()
        try afterStop()
        try? FileManager.default.removeItem(at: settings.workDirectory)
    }

    /// Every process at the most verbose level, logging JSON, through receipts (one a dead letter),
    /// a signed transaction, a lookup, a refund notification and webhook deliveries (some refused,
    /// then retried): no log line carries the shared secret, the client key's secret, the API
    /// private key, the webhook secret, a receipt or a signed transaction.
    @Test func atTheMostVerboseLevelNoSecretReachesALog() async throws {
        var settings = Self.settings
        settings.processesPerStage = 1
        settings.webhooks = true
        let sharedSecret = "shared-secret-\(UUID().uuidString)"
        // The webhook receiver refuses a third of the deliveries: the retries are logged too.
        let sink = WebhookSink(failureRate: 0.3)
        let webhookURL = try await sink.start()
        defer { Task { await sink.stop() } }
        var secrets: [String: String] = ["shared secret": sharedSecret, "webhook secret": WebhookSink.secret]
        let logs = settings.workDirectory.appendingPathComponent("logs")
        try await withCluster(settings, adjust: { cluster in
            cluster.logLevel = "trace"
            cluster.environment = [
                "IAP_LOG_FORMAT": "json", "IAP_APPLE_SHARED_SECRET": sharedSecret, "IAP_WEBHOOK_URL": webhookURL,
                "IAP_WEBHOOK_SECRET": WebhookSink.secret,
            ]
        }, afterStop: {
            var lines = 0
            for file in try FileManager.default.contentsOfDirectory(atPath: logs.path) where file.hasPrefix("iap-") {
                let text = try String(contentsOf: logs.appendingPathComponent(file), encoding: .utf8)
                for (what, secret) in secrets { #expect(!text.contains(secret), "\(file) holds the \(what)") }
                for line in text.split(separator: "\n") {
                    lines += 1
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    #expect(object?["level"] is String && object?["message"] is String, "\(file): not a JSON log line: \(line.prefix(200))")
                }
            }
            #expect(lines > 0)
        }) { cluster, http, store in
            let signer = try #require(cluster.settings.clientSigner)
            secrets["client key secret"] = signer.secret
            let key = try String(contentsOf: settings.workDirectory.appendingPathComponent("apple-api-key.p8"), encoding: .utf8)
            for (index, line) in key.split(separator: "\n").enumerated() where !line.hasPrefix("-----") {
                secrets["API private key line \(index)"] = String(line)
            }
            let client = cluster.loadClient(http)
            var tickets: [String] = []
            let valid = PlannedReceipt.valid(index: 0, trial: 7)
            secrets["a receipt"] = String(valid.receiptData.suffix(60))
            tickets.append(try #require(await client.submit(valid).ticket))
            let unknown = SimulatedReceipt(
                bundleID: LocalCluster.bundleID, transactions: [.init(transactionID: "log-unknown", productID: "not.in.catalog")],
                nonce: "log").receiptData()
            secrets["a receipt of an unknown product"] = String(unknown.suffix(60))
            tickets.append(try #require(await client.submit(
                PlannedReceipt(index: 1, scenario: .valid, userID: "player-x", receiptData: unknown, unit: nil, sameTicketAs: nil)).ticket))
            let transaction = JWSTransaction(
                transactionID: "log-sk2", bundleID: LocalCluster.bundleID, productID: "drill.gold",
                purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", environment: "Production")
            let jws = try await cluster.registerTransaction(transaction)
            secrets["a signed transaction's signature"] = String(jws.split(separator: ".").last!)
            var signed = PlannedReceipt(index: 2, scenario: .signed, userID: "player-y", receiptData: jws, unit: "log-sk2", sameTicketAs: nil)
            signed.evidenceField = "signed_transaction"
            tickets.append(try #require(await client.submit(signed).ticket))
            try await waitUntil {
                var done = 0
                for ticket in tickets where try await store.ticket(ticket)?.status.isTerminal == true { done += 1 }
                return done == tickets.count
            }
            #expect(try await store.ticket(tickets[1])?.status == .dead)
            #expect(try await cluster.deliverNotification(type: "REFUND", transactionID: "log-sk2") == [200])
            try await waitUntil { try await store.redis.send("HEXISTS", store.keys.grant(unit: "log-sk2", originalTransactionID: "log-sk2"), "revoked_at").int == 1 }
            // Every event reached the webhook (signed: the receiver checks), retries included.
            try await waitUntil {
                let entries = try await store.redis.send("XLEN", store.keys.fulfilment).int ?? 0
                return entries > 0 && sink.snapshot.accepted.count == entries
            }
            #expect(sink.snapshot.badSignatures == 0)
        }
    }

    /// Waits for a condition of the running system (with a generous limit, not a timing claim).
    /// Polls with TestSupport's `until`, a failing read counting as "not yet" (a process may be
    /// restarting under the drill's faults).
    private func waitUntil(_ condition: () async throws -> Bool) async throws {
        try await until("the drill's condition holds") { (try? await condition()) == true }
    }
}
