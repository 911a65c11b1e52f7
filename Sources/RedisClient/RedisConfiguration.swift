/// Where and how to connect: parsed from `redis://[user:password@]host[:port][/db]`,
/// `unix:///path.sock[?db=N]`, `redis-sentinel://[user:password@]host[:port][,host[:port]…]/<master>[/db]`
/// or `redis-cluster://[user:password@]host[:port][,host[:port]…]` (a cluster has database 0 only);
/// `rediss://`, `rediss-sentinel://` and `rediss-cluster://` are the same over TLS (`tls`), to every
/// server and sentinel, its certificate always verified.
public struct RedisConfiguration: Sendable, Equatable {
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
        /// The primary that sentinels name, asked anew at every dial. Boxed: unboxed, this payload
        /// beside the others made Swift 6.3's debug build release a null pointer when the
        /// configuration was built (a layout miscompile, reproduced by `parsesSentinelURLs`).
        indirect case sentinel(Sentinels)
        /// A Redis Cluster, found from these seed nodes (`CLUSTER SLOTS`); `RedisClient` routes each
        /// command to the primary of its key's slot. A lone `RedisConnection` talks to the first seed.
        indirect case cluster([Address])
    }

    /// Sentinels, in the order they are asked, and the name they know the primary by.
    public struct Sentinels: Sendable, Equatable {
        public var addresses: [Address]
        public var master: String

        public init(_ addresses: [Address], master: String) {
            self.addresses = addresses
            self.master = master
        }
    }

    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// TLS to the servers (and sentinels): whose certificates are trusted, and our own, if any.
    /// Verification is never off: a server whose certificate the trusted roots did not sign, or
    /// that names another host, is never talked to.
    public struct TLS: Sendable, Hashable {
        /// PEM file of the roots that sign the servers' certificates; `nil`: the system's roots.
        public var caFile: String?
        /// PEM certificate chain and private key presented to a server that asks for one (`tls-auth-clients`).
        public var certificateFile: String?
        public var keyFile: String?

        public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// Sentinel's own port, when a sentinel address has none.
    public static let defaultSentinelPort = 26379

    public var endpoint: Endpoint
    public var username: String?
    public var password: String?
    public var database: Int
    /// How long dialling may take.
    public var connectTimeout: Duration
    /// How long any non-blocking command may take before the connection is declared dead.
    public var commandTimeout: Duration
    /// After a failed dial, calls fail at once for this long (doubling per failure up to the upper bound).
    public var reconnectBackoff: ClosedRange<Duration> = .milliseconds(50) ... .seconds(1)
    /// On a cluster, for a connection of its own (a blocking pop): the slot whose primary it talks
    /// to, found anew at every dial; a `MOVED` reply drops the connection so the next call dials
    /// the new owner. `nil`: the first seed.
    public var clusterSlot: Int?
    /// `nil`: plain TCP.
    public var tls: TLS?
    /// The sentinels' own password (`requirepass` in a sentinel's configuration), if they have one.
    public var sentinelPassword: String?

    public init(
        endpoint: Endpoint,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeout: Duration = .seconds(2),
        commandTimeout: Duration = .seconds(5)
    ) {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    public init(url: String) throws(RedisError) {
        // Built by a static function: a delegating `self.init` at the end of this typed-throwing
        // initializer crashed (a double release of the endpoint) with Swift 6.3 in debug builds.
        self = try Self.parse(url: url)
    }

    private static func parse(url: String) throws(RedisError) -> RedisConfiguration {
        if url.hasPrefix("unix://") {
            var rest = String(url.dropFirst("unix://".count))
            var database = 0
            if let query = rest.firstIndex(of: "?") {
                let params = rest[rest.index(after: query)...]
                rest = String(rest[..<query])
                for pair in params.split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, parts[0] == "db", let db = Int(parts[1]), db >= 0 else {
                        throw .invalidURL("unsupported query '\(pair)'")
                    }
                    database = db
                }
            }
            guard rest.hasPrefix("/"), rest.count > 1 else { throw .invalidURL("unix socket path must be absolute") }
            return RedisConfiguration(endpoint: .unix(path: rest), database: database)
        }
        let secure = url.hasPrefix("rediss")
        let plain = secure ? "redis" + url.dropFirst("rediss".count) : url
        let isSentinel = plain.hasPrefix("redis-sentinel://")
        let isCluster = plain.hasPrefix("redis-cluster://")
        guard plain.hasPrefix("redis://") || isSentinel || isCluster else {
            throw .invalidURL("expected redis://, redis-sentinel://, redis-cluster:// (rediss… over TLS) or unix://")
        }
        var parsed = try parse(plain: plain, isSentinel: isSentinel, isCluster: isCluster)
        if secure { parsed.tls = TLS() }
        return parsed
    }

    private static func parse(plain url: String, isSentinel: Bool, isCluster: Bool) throws(RedisError) -> RedisConfiguration {
        let scheme = isSentinel ? "redis-sentinel://" : isCluster ? "redis-cluster://" : "redis://"
        var rest = Substring(url.dropFirst(scheme.count))
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = String(credentials[..<colon])
                username = user.isEmpty ? nil : try Self.percentDecoded(user)
                password = try Self.percentDecoded(String(credentials[credentials.index(after: colon)...]))
            } else {
                password = try Self.percentDecoded(String(credentials))
            }
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var database = 0
        let endpoint: Endpoint
        if isCluster {
            guard path.isEmpty else { throw .invalidURL("a cluster has database 0 only: nothing may follow the nodes") }
            var seeds: [Address] = []
            for item in rest.split(separator: ",", omittingEmptySubsequences: false) {
                seeds.append(try Self.address(item, defaultPort: 6379))
            }
            endpoint = .cluster(seeds)
        } else if isSentinel {
            // <master>[/db]
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard let master = parts.first, !master.isEmpty else { throw .invalidURL("missing the master's name after the sentinels") }
            guard parts.count <= 2 else { throw .invalidURL("unexpected text after the database") }
            if parts.count == 2, !parts[1].isEmpty {
                guard let db = Int(parts[1]), db >= 0 else { throw .invalidURL("database must be a number") }
                database = db
            }
            var sentinels: [Address] = []
            for item in rest.split(separator: ",", omittingEmptySubsequences: false) {
                sentinels.append(try Self.address(item, defaultPort: Self.defaultSentinelPort))
            }
            let name = try Self.percentDecoded(String(master))
            endpoint = .sentinel(Sentinels(sentinels, master: name))
        } else {
            if !path.isEmpty {
                guard let db = Int(path), db >= 0 else { throw .invalidURL("database must be a number") }
                database = db
            }
            let address = try Self.address(rest, defaultPort: 6379)
            endpoint = .tcp(host: address.host, port: address.port)
        }
        return RedisConfiguration(endpoint: endpoint, username: username, password: password, database: database)
    }

    /// `host[:port]` or `[v6]:port`.
    private static func address(_ text: Substring, defaultPort: Int) throws(RedisError) -> Address {
        var host = String(text)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw .invalidURL("unclosed IPv6 bracket") }
            let after = host[host.index(after: close)...]
            let inner = String(host[host.index(after: host.startIndex)..<close])
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { throw .invalidURL("bad port") }
                port = p
            } else if !after.isEmpty {
                throw .invalidURL("unexpected text after host")
            }
            host = inner
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else {
                throw .invalidURL("bad port")
            }
            port = p
            host = String(host[..<colon])
        }
        guard !host.isEmpty else { throw .invalidURL("missing host") }
        return Address(host: host, port: port)
    }

    private static func percentDecoded(_ text: String) throws(RedisError) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { throw .invalidURL("bad percent escape") }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension RedisConfiguration: CustomStringConvertible {
    /// Where it connects, never its password: safe in a log line.
    public var description: String {
        let place: String = switch endpoint {
        case .tcp(let host, let port): Address(host: host, port: port).description
        case .unix(let path): path
        case .sentinel(let sentinels): "sentinels \(sentinels.addresses.map(\.description).joined(separator: ",")) of \(sentinels.master)"
        case .cluster(let seeds): "cluster \(seeds.map(\.description).joined(separator: ","))"
        }
        return "\(place) db \(database)" + (tls == nil ? "" : " over TLS") + (username.map { " as \($0)" } ?? "")
            + (password == nil ? "" : " (password hidden)")
    }
}
