import ClusterHarness
import Foundation

/// The bench's printed result: throughput and latency, Redis, then CPU and memory per process kind.
package enum BenchTable {
    static let kinds = ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter", "redis-server", "apple-sim", "load-client"]
    static let workerKinds = ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter"]

    package static func render(_ report: BenchReport) -> String {
        var parts: [String] = []
        if let jws = report.jws { parts.append(render(jws)) }
        if let jobs = report.jobs { parts.append(jobs.table) }
        let clients = [report.redisClient, report.redisClientCluster].compactMap { $0 }
        if !clients.isEmpty { parts.append(render(clients)) }
        if let wait = report.wait { parts.append(render(wait)) }
        if let rechecks = report.rechecks { parts.append(render(rechecks)) }
        if let notifications = report.notifications { parts.append("notifications: " + notifications.summary) }
        for row in report.history?.rows ?? [] { parts.append("history: " + row.summary) }
        if let costs = report.stageCosts { parts.append(StageCostBenchResult.table(costs)) }
        if let cost = report.intakeCost { parts.append(IntakeCostBenchResult.table(cost)) }
        for run in report.retention?.runs ?? [] { parts.append("retention: " + run.summary) }
        if let shards = report.shards { parts.append(render(shards)) }
        if !report.scenarios.isEmpty { parts.append(render(report.scenarios)) }
        return parts.joined(separator: "\n\n")
    }

    package static func render(_ jws: JWSBenchResult) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        return TextTable.render(
            header: ["scenario", "tokens x runs", "jws/s per core", "min", "max", "us/jws", "bare ES256/s", "of bare", "parts us", "payload us", "cold first ms", "API token us"],
            rows: [["jws", "\(jws.tokens) x \(jws.runs)", f(jws.jwsPerSecondPerCore), f(jws.minPerSecond), f(jws.maxPerSecond),
                    f(jws.microsecondsPerJWS, 1), f(jws.bareES256PerSecond), f(jws.ofBareES256, 2), f(jws.partsMicroseconds, 1),
                    f(jws.payloadDecodeMicroseconds, 1), f(jws.coldFirstVerificationMs, 1),
                    f(jws.serverAPITokenMicroseconds, 1)]])
    }

    package static func render(_ runs: [RedisClientBenchResult]) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        return TextTable.render(
            header: ["scenario", "on", "callers", "commands/s", "client CPU us/cmd", "rtt p50 us", "rtt p99 us",
                     "redis-benchmark/s", "its CPU us/cmd"],
            rows: runs.map { redis in
                ["redis-client", redis.target, "\(redis.callers)", f(redis.commandsPerSecond), f(redis.clientCPUMicrosecondsPerCommand, 1),
                 f(redis.roundTripP50Microseconds), f(redis.roundTripP99Microseconds), f(redis.redisBenchmarkPerSecond),
                 f(redis.redisBenchmarkCPUMicrosecondsPerCommand, 1)]
            })
    }

    package static func render(_ rechecks: RecheckBenchResult) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        return TextTable.render(
            header: ["scenario", "scheduled", "schedule B/sub", "record B/sub", "total MB", "due", "batch", "drained/s",
                     "µs/batch", "µs/call, none due"],
            rows: [["rechecks", "\(rechecks.subscriptions)", f(rechecks.scheduleBytesPerSubscription),
                    f(rechecks.recordBytesPerSubscription), f(rechecks.totalMB, 1), "\(rechecks.due)", "\(rechecks.batch)",
                    f(rechecks.drainPerSecond), f(rechecks.microsecondsPerBatch), f(rechecks.idleCallMicroseconds, 1)]])
    }

    package static func render(_ shards: [ShardBenchResult]) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let overall = TextTable.render(
            header: ["scenario", "layout", "buckets", "receipts", "receipts/s", "round trips/receipt", "commands/receipt",
                     "Redis CPU ms/receipt (all nodes)"],
            rows: shards.map { run in
                ["shards", run.name, "\(run.buckets)", "\(run.receipts)", f(run.receiptsPerSecond), f(run.roundTripsPerReceipt, 2),
                 f(run.commandsPerReceipt, 1), f(run.redisCPUMsPerReceipt, 3)]
            })
        let nodes = TextTable.render(
            header: ["layout", "node", "role", "CPU ms/receipt", "commands/receipt", "round trips/receipt", "used memory MB", "keys"],
            rows: shards.flatMap { run in
                run.nodes.map { node in
                    [run.name, ":\(node.port)", node.role, f(node.cpuMsPerReceipt, 3), f(node.commandsPerReceipt, 1),
                     f(node.roundTripsPerReceipt, 2), f(node.usedMemoryMB, 1), "\(node.keys)"]
                }
            })
        return overall + "\n\n" + nodes
    }

    package static func render(_ wait: WaitBenchResult) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        return TextTable.render(
            header: ["scenario", "waiting clients", "granted", "intake RSS MB before", "with them", "bytes/client",
                     "intake CPU % waiting", "redis connections", "all answered s", "intake CPU ms answering"],
            rows: [["wait", "\(wait.clients)", "\(wait.granted)", f(wait.intakeRSSBeforeMB, 1), f(wait.intakeRSSWaitingMB, 1),
                    f(wait.bytesPerWaitingClient), f(wait.idleCPUPercent, 2), "\(wait.redisConnectedClients)",
                    f(wait.answeredSeconds, 2), f(wait.intakeCPUMsWhileAnswering)]])
    }

    package static func render(_ results: [ScenarioResult]) -> String {
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let speed = TextTable.render(
            header: ["scenario", "e2e r/s", "intake r/s", "verify r/s", "of C/lat", "dedupe r/s", "grant r/s",
                     "half-peak r/s", "p50 ms", "p95 ms", "p99 ms", "added p99"],
            rows: results.map { r in
                [r.scenario.name, f(r.endToEndPerSecond), f(r.intakePerSecond), f(r.stagePerSecond["verify"] ?? 0),
                 r.verifyShareOfBound.map { f($0 * 100) + " %" } ?? "-", f(r.stagePerSecond["dedupe"] ?? 0),
                 f(r.stagePerSecond["grant"] ?? 0), f(r.halfPeakPerSecond), f(r.latency.p50, 1), f(r.latency.p95, 1),
                 f(r.latency.p99, 1), f(r.pipelineAdded.p99, 1)]
            })
        let redis = TextTable.render(
            header: ["scenario", "round trips/r", "commands/r", "redis CPU ms/1k r", "ceiling LPUSH/s", "ceiling RPOP/s",
                     "of ceiling"],
            rows: results.map { r in
                [r.scenario.name, f(r.roundTripsPerReceipt, 2), f(r.commandsPerReceipt, 1), f(r.redisCPUMsPer1000),
                 f(r.ceiling.lpushPerSecond), f(r.ceiling.rpopPerSecond), f(r.ceilingShare * 100) + " %"]
            })
        let cpu = TextTable.render(
            header: ["CPU ms per 1k receipts"] + kinds,
            rows: results.map { r in [r.scenario.name] + kinds.map { r.processes[$0].map { f($0.cpuMsPer1000) } ?? "-" } })
        let stages = TextTable.render(
            header: ["stages only (no intake)", "receipts/s", "3 stages' CPU ms/1k r", "round trips/r"],
            rows: results.map { r in
                [r.scenario.name, f(r.stagesOnlyPerSecond), f(r.stagesOnlyCPUMsPer1000), f(r.stagesOnlyRoundTripsPerReceipt, 2)]
            })
        let intake = TextTable.render(
            header: ["intake alone (no worker)", "receipts/s", "intake CPU ms/1k r", "bare Hummingbird ms/1k r", "intake over bare"],
            rows: results.map { r in
                [r.scenario.name, f(r.intakePerSecond), f(r.intakeAloneCPUMsPer1000), f(r.hummingbirdFloorCPUMsPer1000),
                 f(r.intakeAloneCPUMsPer1000 / max(r.hummingbirdFloorCPUMsPer1000, 0.001), 2)]
            })
        let light = TextTable.render(
            header: ["fixed rate (light load)", "r/s", "p50 ms", "p99 ms", "added p99", "pipeline CPU ms/1k r", "round trips/r"],
            rows: results.map { r in
                let l = r.lightLoad
                return [r.scenario.name, f(l.perSecond), f(l.latency.p50, 1), f(l.latency.p99, 1), f(l.pipelineAdded.p99, 1),
                        f(l.pipelineCPUMsPer1000), f(l.roundTripsPerReceipt, 2)]
            })
        let memory = TextTable.render(
            header: ["peak RSS MB / idle CPU % / idle RSS MB (anon)"] + workerKinds,
            rows: results.map { r in
                [r.scenario.name] + workerKinds.map { kind in
                    r.processes[kind].map {
                        "\(f($0.peakRSSMB)) / \(f($0.idleCPUPercent, 1)) / \(f($0.idleRSSMB)) (\(f($0.idleAnonymousMB, 1)))"
                    } ?? "-"
                }
            })
        return [speed, light, redis, cpu, stages, intake, memory].joined(separator: "\n\n")
    }
}
