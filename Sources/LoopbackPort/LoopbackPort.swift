#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOConcurrencyHelpers

/// Picks TCP ports on 127.0.0.1 for servers that a test or the drill starts as separate processes.
///
/// A port from `bind(0)` comes from the kernel's ephemeral range, which outgoing connections
/// also draw from: between closing the probe and the server binding it, any connection of a
/// parallel test can take it as its local port, and the server then fails with EADDRINUSE.
/// So ports come from below that range, are probed with a plain bind, and none is handed out
/// twice by one process.
public enum LoopbackPort {
    private static let handedOut = NIOLockedValueBox<Set<Int>>([])

    /// A port nothing listens on right now, never returned before by this process.
    public static func free() throws -> Int {
        let candidates = lowestEphemeral() > 12_000 ? 10_000..<lowestEphemeral() : 20_000..<30_000
        for _ in 0..<1_000 {
            let port = Int.random(in: candidates)
            let fresh = handedOut.withLockedValue { $0.insert(port).inserted }
            if fresh && canBind(port) { return port }
        }
        throw LoopbackPortError(message: "no free loopback port in \(candidates)")
    }

    /// A port that is free, with `port + offset` free too, neither returned before by this process:
    /// a Redis Cluster node listens on its port and, 10000 above it, on its cluster bus.
    public static func freeWithCompanion(offset: Int = 10_000) throws -> Int {
        let top = lowestEphemeral() > 12_000 + offset ? lowestEphemeral() - offset : 20_000
        let candidates = 10_000..<top
        for _ in 0..<1_000 {
            let port = Int.random(in: candidates)
            let fresh = handedOut.withLockedValue { handed in
                guard !handed.contains(port), !handed.contains(port + offset) else { return false }
                handed.insert(port)
                handed.insert(port + offset)
                return true
            }
            if fresh && canBind(port) && canBind(port + offset) { return port }
        }
        throw LoopbackPortError(message: "no free loopback port pair in \(candidates)")
    }

    private static func lowestEphemeral() -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
    }

    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

public struct LoopbackPortError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
