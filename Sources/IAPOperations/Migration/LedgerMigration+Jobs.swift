import AppleReceipt
import Foundation
import IAPStages
import PipelineCore
import RedisClient

extension LedgerMigration {
    /// A job's place on the destination: its bucket and stage, and the job as it goes there.
    struct Placement {
        var bucket: Int
        var stage: String
        var payload: String
        /// The ticket id it was renamed from, when it was.
        var renamedFrom: String?
    }

    /// Where a job goes: its ticket's bucket; a notification's to its purchase's bucket (its
    /// ticket renamed to name it); a grant job whose purchases lie outside its ticket's bucket back
    /// to dedupe (which splits it into parts). `nil` for a user's webhook delivery job (the
    /// stage routes its events again). An entry that is no job stays in bucket 0, as it was.
    func place(_ payload: String, stage: String, _ plan: inout Plan) -> Placement? {
        guard var job = try? Job.decode(payload) else { return Placement(bucket: 0, stage: stage, payload: payload) }
        for purchase in job.claimed?.purchases ?? [] where purchase.isClaimed {
            if let unit = purchase.unit, plan.originals[unit] == nil { plan.originals[unit] = purchase.originalTransactionID }
        }
        let layout = keys.layout
        var changed = false
        var renamedFrom: String?
        switch job.stage {
        case .webhook where job.replayedWebhookEvent == nil:
            return nil
        case .notify where layout.count > 1 && job.part == nil:
            guard let notification = job.notification else { break }
            let bucket = layout.bucket(ofNotification: notification.uuid, originalTransactionID: notification.originalTransactionID)
            plan.notificationBuckets[notification.uuid] = bucket
            if layout.bucket(ofTicket: job.ticket) != bucket || !job.ticket.contains(".") {
                let renamed = plan.renamedTickets[job.ticket] ?? layout.ticketID(job.ticket, inBucket: bucket)
                plan.renamedTickets[job.ticket] = renamed
                renamedFrom = job.ticket
                job.ticket = renamed
                changed = true
            }
        case .grant where job.part == nil && DedupeHandler.parts(of: job, layout: layout) != nil:
            guard let claimed = job.claimed, let verified = Self.reverified(claimed) else { break }
            job.stage = .dedupe
            job.work = .dedupe(verified)
            changed = true
        default:
            break
        }
        return Placement(
            bucket: layout.bucket(ofTicket: job.ownTicket), stage: job.stage.rawValue, payload: changed ? job.encoded() : payload,
            renamedFrom: renamedFrom)
    }

    /// A grant job's work back as dedupe's: the answer narrowed to the purchases dedupe chose
    /// (the client's word on what it bought already applied), with the currency a legacy
    /// receipt's client gave, so dedupe decides the same purchases again; `nil` for a job
    /// without an answer.
    static func reverified(_ claimed: Job.Claimed) -> Job.Verified? {
        claimed.narrowedReceipt.map { receipt in
            Job.Verified(
                receipt: receipt, subscriptionReceipt: claimed.subscriptionReceipt, currency: claimed.purchases.lazy.compactMap(\.currency).first)
        }
    }

    /// Queues (with the in-flight lists of stopped workers at their front), the retry set and the
    /// dead letters, rebuilt on each destination bucket.
    func moveJobs(_ plan: inout Plan, report: inout MigrationReport) async throws {
        let stages = Stage.allCases.map(\.rawValue)
        var queues: [Int: [String: [String]]] = [:]
        var retries: [Int: [(Int64, String)]] = [:]
        var dead: [Int: [String]] = [:]
        var read = 0, dropped = 0

        func add(_ payload: String, stage: String, _ plan: inout Plan) {
            read += 1
            guard let placed = place(payload, stage: stage, &plan) else { return dropped += 1 }
            queues[placed.bucket, default: [:]][placed.stage, default: []].append(placed.payload)
        }
        for stage in stages where plan.names(.queue).contains("queue:\(stage)") {
            for payload in try await list("queue:\(stage)") { add(payload, stage: stage, &plan) }
        }
        for rest in plan.names(.inflight) {
            // `inflight:<stage>:<worker>`: a stopped worker's jobs go to the front of their queue.
            let stage = rest.split(separator: ":").dropFirst().first.map(String.init) ?? ""
            for payload in try await list(rest) { add(payload, stage: stage, &plan) }
        }
        if plan.names(.retry).contains("retry") {
            let reply = try await source.send("ZRANGE", "\(sourcePrefix):retry", "0", "-1", "WITHSCORES").array ?? []
            for index in stride(from: 0, to: reply.count - 1, by: 2) {
                guard let payload = reply[index].string, let score = reply[index + 1].int else { continue }
                read += 1
                guard let placed = place(payload, stage: "", &plan) else {
                    dropped += 1
                    continue
                }
                retries[placed.bucket, default: []].append((score, placed.payload))
            }
        }
        if plan.names(.dead).contains("dead") {
            for entry in try await list("dead") {
                read += 1
                guard var letter = try? DeadLetter.decode(entry) else {
                    dead[0, default: []].append(entry)
                    continue
                }
                if let placed = place(letter.job, stage: letter.stage, &plan) {
                    let unchanged = placed.payload == letter.job && placed.renamedFrom == nil
                    letter.job = placed.payload
                    if Stage(rawValue: letter.stage) != nil { letter.stage = placed.stage }
                    if let ticket = letter.ticket { letter.ticket = plan.renamedTickets[ticket] ?? ticket }
                    dead[placed.bucket, default: []].append(unchanged ? entry : letter.encoded())
                } else if let ticket = letter.ticket {
                    dead[keys.layout.bucket(ofTicket: ticket), default: []].append(entry)
                } else {
                    dead[0, default: []].append(entry)
                }
            }
        }
        var written = 0
        for bucket in 0..<keys.layout.count {
            let k = keys.inBucket(bucket)
            var commands = Stage.allCases.map { RedisCommand("DEL", k.queue($0)) } + [RedisCommand("DEL", k.retry), RedisCommand("DEL", k.dead)]
            for stage in Stage.allCases {
                for chunk in (queues[bucket]?[stage.rawValue] ?? []).chunked(batch) {
                    commands.append(RedisCommand(["RPUSH", k.queue(stage)] + chunk))
                    written += chunk.count
                }
            }
            for chunk in (retries[bucket] ?? []).chunked(batch) {
                commands.append(RedisCommand(["ZADD", k.retry] + chunk.flatMap { [String($0.0), $0.1] }))
                written += chunk.count
            }
            for chunk in (dead[bucket] ?? []).chunked(batch) {
                commands.append(RedisCommand(["RPUSH", k.dead] + chunk))
                written += chunk.count
            }
            try Self.expectOK(try await destination.pipeline(commands))
        }
        plan.jobs = written
        report.add("jobs", source: read, moved: written, note: dropped > 0 ? "\(dropped) webhook delivery jobs routed again" : nil)
        report.renamedTickets = plan.renamedTickets.count
    }

    /// A source list, whole (left to right).
    func list(_ rest: String) async throws -> [String] {
        (try await source.send("LRANGE", "\(sourcePrefix):\(rest)", "0", "-1").array ?? []).compactMap(\.string)
    }
}
