import AsyncHTTPClient
import ClusterHarness
import Foundation
import IAPStages
import RedisClient

/// The soak (issue 38, item 7): a pipeline with every retention compressed to a minute (tickets,
/// the fulfilment stream, trimmed every 15 s) takes a steady load of new purchases for a while;
/// Redis's memory is sampled every 5 s. Once the retention window has passed (the first half),
/// memory must grow only by what the ledger keeps for ever per purchase (claim, grant record,
/// owner, the user's indexes), measured on sampled purchases: what every bounded family holds is
/// flat. It prints the samples, the ledger's bytes per purchase and the growth per purchase.
package struct Soak: Sendable {
    package let settings: DrillSettings
    package let minutes: Int
    package let rate: Int
    package let progress: @Sendable (String) -> Void

    package init(settings: DrillSettings, minutes: Int, rate: Int, progress: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.minutes = minutes
        self.rate = rate
        self.progress = progress
    }

    /// One sample: when (s from the start), purchases submitted, Redis's used memory.
    package struct Sample: Sendable {
        package var second: Double
        package var submitted: Int
        package var usedMemory: Int
    }

    package struct Report: Sendable {
        package var samples: [Sample]
        /// What the ledger keeps for ever per purchase (bytes, `MEMORY USAGE`).
        package var ledgerBytesPerPurchase: Double
        /// How much memory grew per purchase after the retention window (least squares).
        package var growthPerPurchase: Double
        package var purchases: Int
        /// Passed: the growth is the ledger's, within a quarter and 64 bytes.
        package var passed: Bool { growthPerPurchase <= ledgerBytesPerPurchase * 1.25 + 64 }
    }

    package func run() async throws -> Report {
        var cluster = settings.cluster
        cluster.processesPerStage = [.verify: 1, .dedupe: 1, .grant: 1, .notify: 1]
        cluster.clientSigner = nil
        cluster.environment["IAP_TICKET_TTL_S"] = "60"
        cluster.environment["IAP_FULFILMENT_RETENTION_S"] = "60"
        cluster.environment["IAP_NOTIFICATION_SWEEP_S"] = "0"
        cluster.environment["IAP_REFUND_SWEEP_S"] = "0"
        let directory = settings.workDirectory.appendingPathComponent("soak")
        try? FileManager.default.removeItem(at: directory)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { Task { try? await http.shutdown() } }
        let local = try LocalCluster(settings: cluster, directory: directory, http: http)
        // Stopped however the soak ends, a start that failed halfway included (no process left behind).
        do {
            try await local.start()
            let redis = RedisClient(configuration: try RedisConfiguration(url: local.redisURL), poolSize: 2)
            defer { Task { await redis.close() } }
            let report = try await load(local, redis: redis, http: http)
            _ = await local.stop()
            return report
        } catch {
            _ = await local.stop()
            throw error
        }
    }

    private func load(_ cluster: LocalCluster, redis: RedisClient, http: HTTPClient) async throws -> Report {
        let client = cluster.loadClient(http)
        let started = ContinuousClock.now
        let end = started + .seconds(minutes * 60)
        var samples: [Sample] = []
        var submitted = 0
        var batch = 0
        progress("soak: \(minutes) min at \(rate) purchases/s, tickets and the stream kept 60 s, in \(cluster.directory.path)")
        while ContinuousClock.now < end {
            // Five seconds of purchases, then a sample.
            let receipts = (0..<(rate * 5)).map { SoakReceipt(index: batch * rate * 5 + $0) }
            batch += 1
            submitted += await client.submitAll(receipts, perSecond: rate, concurrency: 16).filter { $0.ticket != nil }.count
            let memory = try await Self.usedMemory(redis)
            let second = Double((ContinuousClock.now - started).milliseconds) / 1000
            samples.append(Sample(second: second, submitted: submitted, usedMemory: memory))
            progress(String(format: "soak: %6.0f s  %7d purchases  %6.1f MB", second, submitted, Double(memory) / 1_048_576))
        }
        let ledger = try await Self.ledgerBytesPerPurchase(redis, sample: (0..<200).map { $0 * max(submitted / 200, 1) })
        let steady = samples.filter { $0.second >= Double(minutes * 60) / 2 }
        return Report(samples: samples, ledgerBytesPerPurchase: ledger, growthPerPurchase: Self.slope(steady), purchases: submitted)
    }

    static func usedMemory(_ redis: RedisClient) async throws -> Int {
        let info = try await redis.send("INFO", "memory").string ?? ""
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
        guard let value = line.flatMap({ Int($0.dropFirst("used_memory:".count)) }) else { throw DrillError("no used_memory in INFO") }
        return value
    }

    /// Memory per purchase submitted, least squares over the samples.
    static func slope(_ samples: [Sample]) -> Double {
        guard samples.count > 1 else { return 0 }
        let xs = samples.map { Double($0.submitted) }, ys = samples.map { Double($0.usedMemory) }
        let mx = xs.reduce(0, +) / Double(xs.count), my = ys.reduce(0, +) / Double(ys.count)
        let covariance = zip(xs, ys).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
        let variance = xs.map { ($0 - mx) * ($0 - mx) }.reduce(0, +)
        return variance == 0 ? 0 : covariance / variance
    }

    /// The bytes of every key without a time to live that names a sampled purchase's transaction
    /// or user (the ledger and the user's indexes), averaged over the sample.
    static func ledgerBytesPerPurchase(_ redis: RedisClient, sample: [Int]) async throws -> Double {
        let names = Set(sample.map { SoakReceipt.id($0) })
        var cursor = "0"
        var bytes = 0
        repeat {
            let reply = try await redis.send("SCAN", cursor, "COUNT", "1000").array ?? []
            cursor = reply.first?.string ?? "0"
            for key in (reply.count > 1 ? reply[1].array ?? [] : []).compactMap(\.string) {
                guard names.contains(Self.idPart(key)) else { continue }
                guard try await redis.send("PTTL", key).int == -1 else { continue }
                bytes += Int(try await redis.send("MEMORY", "USAGE", key).int ?? 0)
            }
        } while cursor != "0"
        return Double(bytes) / Double(max(names.count, 1))
    }

    /// `soak-<n>` out of a key (`iap:txn:tx-soak-<n>`, `iap:{u:player-soak-<n>}:…`).
    static func idPart(_ text: String) -> String {
        guard let range = text.range(of: "soak-") else { return "" }
        return String(text[range.lowerBound...].prefix { $0 != "}" && $0 != ":" })
    }
}

/// A new consumable purchase of its own user, as the bench's.
struct SoakReceipt: SubmittableReceipt {
    let userID: String
    let receiptData: String

    static func id(_ index: Int) -> String { "soak-\(index)" }

    init(index: Int) {
        userID = "player-\(Self.id(index))"
        receiptData = LocalCluster.consumableReceipt(id: Self.id(index))
    }
}
