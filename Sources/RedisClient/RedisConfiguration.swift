/// Where and how to connect: parsed from `redis://[user:password@]host[:port][/db]` or `unix:///path.sock[?db=N]`.
public struct RedisConfiguration: Sendable, Equatable {
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    public var endpoint: Endpoint
    public var username: String?
    public var password: String?
    public var database: Int
    /// How long dialling may take.
    public var connectTimeoutMs: Int
    /// How long any non-blocking command may take before the connection is declared dead.
    public var commandTimeoutMs: Int
    /// After a failed dial, calls fail at once for this long (doubling per failure up to the upper bound).
    public var reconnectBackoffMs: ClosedRange<Int> = 50...2000

    public init(
        endpoint: Endpoint,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeoutMs: Int = 2000,
        commandTimeoutMs: Int = 5000
    ) {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeoutMs = connectTimeoutMs
        self.commandTimeoutMs = commandTimeoutMs
    }

    public init(url: String) throws(RedisError) {
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
            self.init(endpoint: .unix(path: rest), database: database)
            return
        }
        guard url.hasPrefix("redis://") else { throw .invalidURL("expected redis:// or unix://") }
        var rest = Substring(url.dropFirst("redis://".count))
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
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let dbText = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !dbText.isEmpty {
                guard let db = Int(dbText), db >= 0 else { throw .invalidURL("database must be a number") }
                database = db
            }
        }
        var host = String(rest)
        var port = 6379
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
        self.init(endpoint: .tcp(host: host, port: port), username: username, password: password, database: database)
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
