/// Whether a host name or address is this machine's loopback: `localhost`, `::1` (bracketed or
/// not) and every address of 127.0.0.0/8. What may be left open or spoken to in plain HTTP.
public enum LoopbackHost {
    public static func contains(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }
}
