import Foundation
import Hummingbird
import TestSupport
import Logging
import ServiceLifecycle

/// A Hummingbird application running on a free loopback port for one test.
package final class RunningServer: Sendable {
    package let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// `make` receives the callback the application calls with its bound port.
    package static func start(
        _ make: (@escaping @Sendable (Int) async -> Void) throws -> some ApplicationProtocol
    ) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try make { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: testLogger))
        let task = Task {
            // A server that fails to start ends the stream, so the caller fails instead of waiting forever.
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            _ = try await task.value
            throw TestSupportError("the server stopped before it listened")
        }
        return RunningServer(port: port, group: group, task: task)
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
