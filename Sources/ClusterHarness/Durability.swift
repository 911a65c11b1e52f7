/// How a local cluster's redis-server persists its data: what a crash of Redis may lose.
package enum Durability: String, CaseIterable, Sendable, Codable {
    /// AOF, fsync before every reply: an acknowledged write survives a crash of Redis or the host.
    case always
    /// AOF, fsync once a second: a Redis crash loses nothing the kernel got; a host crash up to ~1 s.
    case everysec
    /// No AOF, no snapshots: a Redis crash loses everything (shows that the drill notices loss).
    case none

    var redisArguments: [String] {
        switch self {
        case .always: ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        case .everysec: ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
        case .none: ["--appendonly", "no", "--save", ""]
        }
    }
}
