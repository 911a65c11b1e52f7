import NIOCore
import NIOPosix
import TestSupport

/// One HTTP/1.1 request written byte for byte as given (no client between the test and the
/// server to normalise `//`, `.` or percent-escapes), answered on a connection of its own.
package enum RawHTTP {
    package struct Answer: Sendable {
        package var status: Int
        package var text: String
    }

    /// Writes `bytes` as they are and returns everything the server sent until it closed.
    package static func exchange(port: Int, bytes: [UInt8]) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: bytes))
            var received = ByteBuffer()
            for try await chunk in inbound { received.writeImmutableBuffer(chunk) }
            return String(buffer: received)
        }
    }

    package static func send(
        port: Int, method: String, target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        var request = ByteBuffer(string: head)
        request.writeBytes(body)
        let text = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(request)
            var received = ByteBuffer()
            for try await chunk in inbound { received.writeImmutableBuffer(chunk) }
            return String(buffer: received)
        }
        // "HTTP/1.1 401 Unauthorized": the second word.
        let words = text.prefix { $0 != "\r" }.split(separator: " ")
        guard words.count >= 2, let status = Int(words[1]) else { throw TestSupportError("no status line in \(text.prefix(80))") }
        return Answer(status: status, text: text)
    }
}
