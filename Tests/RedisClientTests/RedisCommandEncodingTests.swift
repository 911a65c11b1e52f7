import NIOCore
@testable import RedisClient
import Testing

/// A command's wire bytes (RESP, written by the client itself since hiredis's formatter cost a
/// copy and an `sprintf` per argument) are what the protocol says, byte for byte: empty, binary,
/// large and many arguments, and commands one after another in one buffer.
@Suite struct RedisCommandEncodingTests {
    static let commands: [RedisCommand] = [
        RedisCommand("PING"),
        RedisCommand("SET", "k", "v"),
        RedisCommand(bytes: [Array("SET".utf8), [], Array("a\r\nb\0c\"".utf8)]),
        RedisCommand(bytes: [Array("SET".utf8), Array("big".utf8), [UInt8](repeating: 0x41, count: 123_456)]),
        RedisCommand(["EVALSHA", "sha"] + (0..<12).map { "argument-\($0)-\(String(repeating: "é", count: $0))" }),
        RedisCommand(bytes: [Array("MSET".utf8)] + (0..<1000).map { Array(String($0).utf8) }),
        RedisCommand(parts: [.text("EVALSHA"), .bytes([]), .text(""), .text("ключ-{1}"), .bytes([0, 0x0D, 0x0A]), .text(String(repeating: "x", count: 70_000))]),
    ]

    @Test(arguments: commands.indices)
    func aCommandIsWrittenAsTheProtocolSays(_ index: Int) {
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        Self.commands[index].encode(into: &buffer)
        Self.expectSame(Array(buffer.readableBytesView), Self.resp(Self.commands[index]))
    }

    @Test func commandsFollowOneAnotherInOneBuffer() {
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        for command in Self.commands { command.encode(into: &buffer) }
        Self.expectSame(Array(buffer.readableBytesView), Self.commands.flatMap { Self.resp($0) })
    }

    /// A command is its bytes: given as strings or as bytes, the same arguments make an equal command.
    @Test func aCommandIsItsBytes() {
        #expect(RedisCommand("SET", "k", "é") == RedisCommand(bytes: [Array("SET".utf8), Array("k".utf8), Array("é".utf8)]))
        #expect(RedisCommand(parts: [.text("GET"), .bytes(Array("k".utf8))]) == RedisCommand("GET", "k"))
        #expect(RedisCommand("GET", "k") != RedisCommand("GET", "k2"))
        #expect(RedisCommand("evalsha", "sha").name == "EVALSHA")
    }

    /// RESP as the protocol's documentation writes it.
    static func resp(_ command: RedisCommand) -> [UInt8] {
        var bytes = Array("*\(command.arguments.count)\r\n".utf8)
        for argument in command.arguments {
            bytes += Array("$\(argument.count)\r\n".utf8) + argument + Array("\r\n".utf8)
        }
        return bytes
    }

    /// The two byte strings are the same (a difference is told by its place, not by every byte).
    static func expectSame(_ ours: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let differs = ours.indices.first { $0 >= expected.count || ours[$0] != expected[$0] }
            ?? (ours.count == expected.count ? nil : ours.count)
        #expect(differs == nil, "\(ours.count) bytes against \(expected.count), first difference at \(differs ?? -1)", sourceLocation: sourceLocation)
    }
}
