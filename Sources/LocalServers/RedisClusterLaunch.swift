import Foundation

/// How the tests and the bench start a Redis Cluster on loopback: `primaries` primaries with
/// `replicasEach` replicas each (`redis-server --cluster-enabled yes`, joined by `redis-cli
/// --cluster create`), returned once every node says the cluster is whole and every replica is
/// in sync. Each port's cluster bus (port + 10000) must be free too.
public struct RedisClusterLaunch: Sendable {
    public var ports: [Int]
    /// One folder per node is made below it.
    public var directory: URL
    public var replicasEach: Int
    /// How long a silent node has before it is failed over.
    public var nodeTimeout: Duration

    public init(ports: [Int], directory: URL, replicasEach: Int, nodeTimeout: Duration) {
        self.ports = ports
        self.directory = directory
        self.replicasEach = replicasEach
        self.nodeTimeout = nodeTimeout
    }

    /// Starts the nodes and joins them. `started` is called with each node's process as it
    /// starts, so the caller can stop what started when a later step fails.
    public func start(started: (Int, Process) -> Void) async throws {
        for port in ports {
            let process = try await RedisServerLaunch(
                port: port, directory: directory.appendingPathComponent("node-\(port)"), options: Self.nodeOptions(nodeTimeout: nodeTimeout)
            ).start()
            started(port, process)
        }
        try await join()
    }

    /// What makes a redis-server a cluster node (its `nodes.conf` in its folder, so a node started
    /// again on the same folder rejoins as what the cluster says it is now).
    public static func nodeOptions(nodeTimeout: Duration) -> [String] {
        let timeoutMs = nodeTimeout.components.seconds * 1000 + nodeTimeout.components.attoseconds / 1_000_000_000_000_000
        return ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String(timeoutMs)]
    }

    /// Joins nodes already started with `nodeOptions` (`redis-cli --cluster create`), and returns
    /// once every node says the cluster is whole and every replica is in sync.
    public func join() async throws {
        let (status, said) = try await Self.redisCLI(
            ["--cluster", "create"] + ports.map { "127.0.0.1:\($0)" } + ["--cluster-replicas", String(replicasEach), "--cluster-yes"])
        guard status == 0 else { throw LocalServerError("redis-cli --cluster create failed:\n\(said)") }
        try await Self.waitUntilWhole(ports: ports, replicasEach: replicasEach)
    }

    /// Returns once every node on `ports` says `cluster_state:ok` and every primary among them has
    /// `replicasEach` replicas online. Gossip has no event to await: this polls.
    public static func waitUntilWhole(ports: [Int], replicasEach: Int, within limit: Duration = .seconds(30)) async throws {
        for port in ports {
            _ = try await poll("node :\(port) says cluster_state:ok", within: limit) {
                (try? await Self.redisCLI(["-p", String(port), "CLUSTER", "INFO"]))?.1.contains("cluster_state:ok") == true ? true : nil
            }
        }
        guard replicasEach > 0 else { return }
        for port in ports {
            let role = (try? await Self.redisCLI(["-p", String(port), "ROLE"]))?.1 ?? ""
            guard role.hasPrefix("master") else { continue }
            _ = try await poll("primary :\(port) has \(replicasEach) replica(s) online", within: limit) {
                let info = (try? await Self.redisCLI(["-p", String(port), "INFO", "replication"]))?.1 ?? ""
                let online = info.components(separatedBy: "state=online").count - 1
                return info.contains("connected_slaves:\(replicasEach)") && online == replicasEach ? true : nil
            }
        }
    }

    private static func redisCLI(_ arguments: [String]) async throws -> (Int32, String) {
        try await Executable.run("redis-cli", arguments)
    }
}
