import AppleSimulator
import AsyncHTTPClient
import Foundation
import LocalServers
import PipelineCore
import IAPStages
import LoopbackPort
import NIOCore
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// A running pipeline on loopback: redis-server (alone, or a primary with replicas and sentinels),
/// apple-sim, the intake and N processes per stage, all real processes, with their data and logs
/// in one folder. The drill breaks it through these methods (`heal` puts every part back); the
/// bench measures it.
package actor LocalCluster {
    package static let bundleID = "com.example.drill"
    /// `drill.gem` is capped at `gemDailyLimit` a day per user: the purchase policy holds the rest.
    /// `drill.vip` is a subscription apple-sim renews by itself.
    package static let products = #"""
        {"products": {"drill.gold": {"type": "consumable"}, "drill.pack": {"type": "non_consumable"},
                      "drill.gem": {"type": "consumable", "daily_limit_per_user": 2},
                      "drill.vip": {"type": "auto_renewable", "entitlements": ["vip"], "subscription_group": "vip"}}}
        """#
    package static let gemDailyLimit = 2

    /// The receipt data of one new `drill.gold` purchase, transaction `tx-<id>`, for this cluster's app.
    package static func consumableReceipt(id: String) -> String {
        let gold = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", productID: "drill.gold")
        return SimulatedReceipt(bundleID: bundleID, transactions: [gold], nonce: id).receiptData()
    }

    package nonisolated let settings: ClusterSettings
    package nonisolated let directory: URL
    /// The Redis nodes' ports: the first starts as the primary (a failover moves the primary).
    package nonisolated let redisPorts: [Int]
    package nonisolated let sentinelPorts: [Int]
    package nonisolated let simulatorPort: Int
    package nonisolated let intakePort: Int
    package nonisolated let keys: RedisKeys
    private let http: HTTPClient
    nonisolated var controlClient: HTTPClient { http }
    var redisNodes: [ManagedProcess?]
    var sentinels: [ManagedProcess?]
    /// The index in `redisPorts` of the primary now.
    var primary = 0
    /// Notification outages in progress (the drill's fault and its refunds' may overlap): the
    /// intake refuses Apple's deliveries while there is one.
    var notificationOutages = 0
    private var simulator: ManagedProcess?
    private var intake: ManagedProcess?
    private var workers: [Stage: [ManagedProcess]] = [:]
    /// Every process started, replaced ones included: an exit nobody asked for is a crash.
    private var everyProcess: [ManagedProcess] = []
    private var launches = 0

    package init(settings: ClusterSettings, directory: URL, http: HTTPClient) throws {
        self.settings = settings
        self.directory = directory
        self.http = http
        // On a cluster, buckets spread the keys over slots: a plain prefix then, not one hash tag.
        let prefix = settings.topology == .cluster && settings.buckets > 1 ? "iap" : settings.topology.prefix
        keys = RedisKeys(prefix: prefix, layout: BucketLayout(count: settings.buckets))
        // A cluster node also listens on its port + 10000 (the cluster bus).
        redisPorts = try (0..<settings.topology.nodes).map { _ in
            try settings.topology == .cluster ? LoopbackPort.freeWithCompanion() : LoopbackPort.free()
        }
        sentinelPorts = try (0..<settings.topology.sentinelCount).map { _ in try LoopbackPort.free() }
        redisNodes = Array(repeating: nil, count: redisPorts.count)
        sentinels = Array(repeating: nil, count: sentinelPorts.count)
        simulatorPort = try LoopbackPort.free()
        intakePort = try LoopbackPort.free()
    }

    /// The first Redis node: the only one in the `single` topology.
    package nonisolated var redisPort: Int { redisPorts[0] }

    /// What every process dials: the node, the sentinels that name the primary, or the cluster's nodes.
    package nonisolated var redisURL: String {
        switch settings.topology {
        case .single: "redis://127.0.0.1:\(redisPort)"
        case .sentinel:
            "redis-sentinel://" + sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/\(RedisTopology.master)"
        case .cluster: "redis-cluster://" + redisPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",")
        }
    }
    package nonisolated var intakeURL: String { "http://127.0.0.1:\(intakePort)" }
    private nonisolated var simulatorURL: String { "http://127.0.0.1:\(simulatorPort)" }
    var dataDirectory: URL { directory.appendingPathComponent("data") }
    /// Written by apple-sim at start: the root of its signing authority, and its Server API key.
    private nonisolated var rootCertificateFile: URL { directory.appendingPathComponent("apple-sim-root.pem") }
    private nonisolated var apiKeyFile: URL { directory.appendingPathComponent("apple-api-key.p8") }
    /// apple-sim's base URL, for its control endpoints (`/control/transactions`, `/control/api-calls`, …).
    package nonisolated var appleURL: String { simulatorURL }
    var logDirectory: URL { directory.appendingPathComponent("logs") }
    /// The intake's `IAP_CLIENT_KEYS_FILE` when `settings.clientSigner` is set.
    package nonisolated var clientKeysFile: URL { directory.appendingPathComponent("client-keys.json") }

    /// A client of this cluster's intake (signing its requests when the intake checks them).
    package nonisolated func loadClient(_ http: HTTPClient) -> LoadClient {
        LoadClient(http: http, intakeURL: intakeURL, signer: settings.clientSigner)
    }

    /// Starts every part; with `workers: false` only Redis, apple-sim and the intake (jobs queue
    /// up until `addWorker`).
    package func start(workers startWorkers: Bool = true) async throws {
        for folder in [dataDirectory, logDirectory] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data(Self.products.utf8).write(to: directory.appendingPathComponent("products.json"))
        if let signer = settings.clientSigner { try Data(signer.keysFile.utf8).write(to: clientKeysFile) }
        try await startRedis()
        try await startSimulator()
        for stage in Stage.allCases {
            let count = startWorkers ? settings.processesPerStage[stage, default: 0] : 0
            workers[stage] = try (0..<count).map { _ in try launchWorker(stage) }
        }
        for process in workers.values.flatMap({ $0 }) { try await waitUntilRegistered(process) }
        try await startIntake()
    }

    /// The running processes by kind (`redis-server`, `apple-sim`, `iap-intake`, `iap-verifier`, …).
    package func processesByKind() -> [String: [ManagedProcess]] {
        var kinds: [String: [ManagedProcess]] = [:]
        let parts = redisNodes + sentinels + [simulator, intake]
        for process in parts.compactMap({ $0 }) + workers.values.flatMap({ $0 }) where process.isRunning {
            kinds[process.kind, default: []].append(process)
        }
        return kinds
    }

    // MARK: faults

    package func workerCount(_ stage: Stage) -> Int { workers[stage]?.count ?? 0 }

    package func worker(_ stage: Stage, at index: Int) -> ManagedProcess? { workers[stage]?[index] }

    /// Starts one more process for `stage`; returns its index once it is registered (or at once,
    /// for a caller that times the process from its start).
    package func addWorker(_ stage: Stage, waitUntilRegistered wait: Bool = true) async throws -> Int {
        workers[stage, default: []].append(wait ? try await startWorker(stage) : try launchWorker(stage))
        return workers[stage]!.count - 1
    }

    /// Ends a stage process with `signal` and starts its replacement after `pauseMs`.
    package func replaceWorker(_ stage: Stage, at index: Int, signal: Int32, pauseMs: Int) async throws -> (String, ManagedProcess.Exit) {
        guard let process = workers[stage]?[index] else { throw ClusterError("no \(stage) process \(index)") }
        let exit = await process.stop(with: signal)
        if pauseMs > 0 { try await Task.sleep(for: .milliseconds(pauseMs)) }
        workers[stage]?[index] = try await startWorker(stage)
        return (process.name, exit)
    }

    /// The jobs each running stage process holds now (the length of its in-flight list).
    package func jobsHeld() async throws -> [(stage: Stage, index: Int, jobs: Int)] {
        // Reads only (no script builds keys): every worker id, then its list's length.
        let port = String(primaryPort)
        let members = try await runTool("redis-cli", ["-p", port, "ZRANGE", keys.workers, "0", "-1"])
            .split(separator: "\n").map(String.init)
        var lines: [String] = []
        for member in members {
            lines += [member, try await runTool("redis-cli", ["-p", port, "LLEN", keys.inflight(member: member)])
                .trimmingCharacters(in: .whitespacesAndNewlines)]
        }
        var held: [(stage: Stage, index: Int, jobs: Int)] = []
        for stage in Stage.allCases {
            for (index, process) in (workers[stage] ?? []).enumerated() where process.isRunning {
                let jobs = stride(from: 0, to: lines.count - 1, by: 2)
                    .filter { lines[$0].hasPrefix("\(stage.rawValue):") && Self.pid(ofMember: lines[$0]) == process.pid }
                    .compactMap { Int(lines[$0 + 1]) }.reduce(0, +)
                held.append((stage, index, jobs))
            }
        }
        return held
    }

    /// SIGSTOP, wait, SIGCONT: the process misses its heartbeats while its jobs are reaped.
    package func stallWorker(_ stage: Stage, at index: Int, forMs: Int) async throws {
        guard let process = workers[stage]?[index] else { throw ClusterError("no \(stage) process \(index)") }
        process.signal(SIGSTOP)
        try await Task.sleep(for: .milliseconds(forMs))
        process.signal(SIGCONT)
    }

    /// `kill -9` redis-server, then start it again on the same folder after `pauseMs`. With
    /// `RedisCrash.powerCut` the kill also loses every AOF write that was not yet fsynced. (With
    /// sentinels, a primary that comes back may meet a failover half done: use `failover`.)
    package func crashRedis(pauseMs: Int) async throws {
        guard settings.topology == .single else { throw ClusterError("a Redis crash and restart needs the single topology") }
        await killRedis()
        if pauseMs > 0 { try await Task.sleep(for: .milliseconds(pauseMs)) }
        try await healRedis()
    }

    /// `kill -9` the intake, then start it again on its port after `pauseMs`.
    package func crashIntake(pauseMs: Int) async throws {
        if let intake { await intake.stop(with: SIGKILL) }
        if pauseMs > 0 { try await Task.sleep(for: .milliseconds(pauseMs)) }
        try await startIntake()
    }

    /// `kill -9` every redis-server and leave them down until `heal`.
    package func killRedis() async {
        for node in redisNodes { await node?.stop(with: SIGKILL) }
    }

    package func appleOutage(_ outage: SimulatedOutage) async throws {
        var request = HTTPClientRequest(url: simulatorURL + "/control/outage")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(outage)))
        let response = try await http.execute(request, timeout: .seconds(5))
        guard response.status == .noContent else { throw ClusterError("apple-sim refused the outage: \(response.status)") }
    }

    /// Pushes poison on every stage queue of the primary: bytes that are not a job, and a
    /// well-formed job whose ticket never existed (as replicated as the pipeline's own writes, so
    /// a failover does not take it back). Returns how many entries it pushed.
    package func poison(nonce: UInt64) async throws -> Int {
        // Only the queues some process takes from.
        let stages = Stage.allCases.filter { settings.processesPerStage[$0, default: 0] > 0 }
        var commands = stages.map { stage in
            var ghost = Job(
                ticket: "ghost-\(nonce)-\(stage.rawValue)", userID: "nobody", receiptData: "e30=", productID: nil,
                transactionID: nil, enqueuedAt: 0)
            ghost.stage = stage
            return RedisCommand("LPUSH", keys.queue(stage), "\u{1}not a job \(nonce) {", ghost.encoded())
        }
        if settings.minReplicas > 0 { commands.append(RedisCommand("WAIT", String(settings.minReplicas), "5000")) }
        let replies = try await pipeline(commands, onNodeAt: primaryPort)
        guard replies.prefix(stages.count).allSatisfy({ $0.int != nil }),
            replies.dropFirst(stages.count).allSatisfy({ ($0.int ?? 0) >= settings.minReplicas })
        else { throw ClusterError("pushing poison failed: \(replies)") }
        return 2 * stages.count
    }

    /// Every part running again: Redis up, Apple back, a live process in every slot.
    package func heal() async throws {
        try await healRedis()
        try await appleOutage(SimulatedOutage(mode: .off, durationMs: 0))
        for stage in Stage.allCases {
            for index in workers[stage]?.indices ?? 0..<0 where workers[stage]?[index].isRunning != true {
                workers[stage]?[index] = try await startWorker(stage)
            }
        }
        if intake?.isRunning != true { try await startIntake() }
    }

    /// Processes that exited without being asked to.
    package func crashes() -> [String] {
        everyProcess.filter(\.crashed).map { "\($0.name) exited on its own (\($0.exitStatus.map { "\($0)" } ?? "?"))" }
    }

    /// SIGTERM to the intake and every worker (each must exit 0), then Redis and apple-sim go.
    /// Returns the processes that did not stop cleanly.
    package func stop() async -> [String] {
        var unclean: [String] = []
        let graceful = (workers.values.flatMap { $0 } + [intake].compactMap { $0 }).filter(\.isRunning)
        await withTaskGroup(of: (String, ManagedProcess.Exit).self) { group in
            for process in graceful {
                group.addTask {
                    let watchdog = Task {
                        try await Task.sleep(for: .seconds(30))
                        process.signal(SIGKILL)
                    }
                    defer { watchdog.cancel() }
                    return (process.name, await process.stop(with: SIGTERM))
                }
            }
            for await (name, exit) in group where !exit.isClean {
                unclean.append("\(name) did not exit 0 on SIGTERM (\(exit))")
            }
        }
        for process in (sentinels + redisNodes + [simulator]).compactMap({ $0 }) { await process.stop(with: SIGKILL) }
        return unclean
    }

    // MARK: starting parts

    func launch(
        _ name: String, _ executable: URL, _ arguments: [String] = [], environment extra: [String: String] = [:]
    ) throws -> ManagedProcess {
        launches += 1
        var executable = executable
        var arguments = arguments
        if let prefix = settings.launchPrefix[name], let wrapper = prefix.first {
            arguments = Array(prefix.dropFirst()) + [executable.path] + arguments
            executable = try Executable.find(wrapper)
        }
        let process = try ManagedProcess.launch(
            name: "\(name)#\(launches)", executable: executable, arguments: arguments,
            environment: environment.merging(extra) { $1 }, log: logDirectory.appendingPathComponent("\(name)-\(launches).log"))
        everyProcess.append(process)
        return process
    }

    private func launchWorker(_ stage: Stage) throws -> ManagedProcess {
        let name = Self.executable(of: stage)
        return try launch(name, settings.binDirectory.appendingPathComponent(name))
    }

    /// The executable that runs `stage`'s workers.
    package static func executable(of stage: Stage) -> String {
        switch stage {
        case .verify: "iap-verifier"
        case .dedupe: "iap-deduper"
        case .grant: "iap-granter"
        case .notify: "iap-notifier"
        case .webhook: "iap-webhook"
        }
    }

    private func startWorker(_ stage: Stage) async throws -> ManagedProcess {
        let process = try launchWorker(stage)
        try await waitUntilRegistered(process)
        return process
    }

    /// A worker is up once its heartbeat is in `iap:workers` (its id holds its pid): from then on
    /// a SIGTERM meets its graceful stop.
    private func waitUntilRegistered(_ process: ManagedProcess) async throws {
        try await waitUntil("\(process.name) registers in \(keys.workers)", while: process) {
            let members = (try? await self.runTool("redis-cli", ["-p", String(await self.primaryPort), "ZRANGE", self.keys.workers, "0", "-1"])) ?? ""
            return members.split(separator: "\n").contains { Self.pid(ofMember: String($0)) == process.pid }
        }
    }

    /// The pid in a worker id, `<stage>:<host>-<pid>-<suffix>` (the host may hold hyphens too).
    static func pid(ofMember member: String) -> Int32? {
        let parts = member.split(separator: "-")
        return parts.count >= 3 ? Int32(parts[parts.count - 2]) : nil
    }

    private func startSimulator() async throws {
        simulator = try launch(
            "apple-sim", settings.binDirectory.appendingPathComponent("apple-sim"),
            ["--port", String(simulatorPort), "--latency-ms", String(settings.appleLatencyMs),
             "--root-cert-out", rootCertificateFile.path, "--api-key-out", apiKeyFile.path])
        try await waitUntil("apple-sim is up", while: simulator) { await self.answers200(self.simulatorURL + "/healthz") }
    }

    private func startIntake() async throws {
        intake = try launch(
            "iap-intake", settings.binDirectory.appendingPathComponent("iap-intake"),
            environment: settings.clientSigner == nil ? [:] : ["IAP_CLIENT_KEYS_FILE": clientKeysFile.path])
        try await waitUntil("the intake is ready", while: intake) { await self.answers200(self.intakeURL + "/readyz") }
    }

    /// Runs `iapctl` to its end with what every pipeline process gets (and `extra`): its exit
    /// status and what it printed.
    package func iapctl(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try await Executable.run(
            at: settings.binDirectory.appendingPathComponent("iapctl"), arguments, environment: environment.merging(extra) { $1 })
    }

    /// What every pipeline process gets: short leases and retries so a trial drains in seconds.
    private var environment: [String: String] {
        ownEnvironment.merging(settings.environment) { _, extra in extra }
    }

    private var ownEnvironment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "IAP_LOG_LEVEL": settings.logLevel,
            "IAP_REDIS_URL": redisURL,
            "IAP_PREFIX": keys.prefix,
            "IAP_BUCKETS": String(keys.layout.count),
            "IAP_HTTP_PORT": String(intakePort),
            "IAP_APPLE_PRODUCTION_URL": simulatorURL + AppleSimulator.productionPath,
            "IAP_APPLE_SANDBOX_URL": simulatorURL + AppleSimulator.sandboxPath,
            "IAP_APPLE_TIMEOUT_MS": String(settings.appleTimeout.milliseconds),
            "IAP_BUNDLE_IDS": Self.bundleID,
            "IAP_PRODUCTS_FILE": directory.appendingPathComponent("products.json").path,
            "IAP_CONCURRENCY": String(settings.workerConcurrency),
            "IAP_LEASE_MS": String(settings.lease.milliseconds),
            "IAP_RETRY_BASE_MS": String(settings.retryBase.milliseconds),
            "IAP_RETRY_MAX_MS": String(settings.retryMax.milliseconds),
            "IAP_MAX_ATTEMPTS": String(settings.maxAttempts),
            "IAP_SHUTDOWN_GRACE_MS": "5000",
            "IAP_REDIS_POOL_SIZE": String(settings.redisPoolSize),
            "IAP_REDIS_MIN_REPLICAS": String(settings.minReplicas),
            "IAP_APPLE_ROOT_CERTS": rootCertificateFile.path,
            "IAP_APPLE_API_PRODUCTION_URL": simulatorURL,
            "IAP_APPLE_API_SANDBOX_URL": simulatorURL + SimulatedServerAPI.sandboxPrefix,
            "IAP_APPLE_API_KEY_ID": "DRILLKEY01",
            "IAP_APPLE_API_ISSUER_ID": "6c8a1f5e-drill-issuer",
            "IAP_APPLE_API_PRIVATE_KEY_FILE": apiKeyFile.path,
            "IAP_APPLE_API_MAX_RPS": String(settings.appleAPIMaxRPS),
        ]
    }

    private func answers200(_ url: String) async -> Bool {
        guard let response = try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(2)) else { return false }
        return response.status == .ok
    }

    /// Polls `condition` while `process` runs; a process that exits first fails at once, with
    /// the end of its log in the error so a CI run shows why.
    func waitUntil(
        _ what: String, while process: ManagedProcess?, within limit: Duration = .seconds(30),
        _ condition: @Sendable () async -> Bool
    ) async throws {
        _ = try await waitFor(what, while: process, within: limit) { await condition() ? true : nil }
    }

    /// Polls `probe` until it finds something, while `process` runs (as `waitUntil`).
    func waitFor<Found: Sendable>(
        _ what: String, while process: ManagedProcess?, within limit: Duration = .seconds(30),
        _ probe: @Sendable () async -> Found?
    ) async throws -> Found {
        do {
            return try await poll(what, within: limit, giveUp: {
                if let process, let exit = process.exitStatus {
                    throw ClusterError("\(process.name) exited (\(exit)) before \(what):\n\(process.logTail())")
                }
            }) { await probe() }
        } catch let error as LocalServerError {
            throw ClusterError("\(error); \(process?.name ?? "") said:\n\(process?.logTail() ?? "")")
        }
    }

    package func runTool(_ name: String, _ arguments: [String]) async throws -> String {
        try await Executable.run(name, arguments).output
    }
}
