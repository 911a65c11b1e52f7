import Hummingbird
import IAPStages
import LoopbackPort
import PipelineTestSupport
import Testing

/// `WebhookClient` against a receiver that is down, then back on the same port.
struct WebhookClientTests {
    /// A post that cannot connect fails at once, and leaves no backoff behind in the client's pool:
    /// the first post after the receiver is back is delivered, though it may wait less than the
    /// pool's own backoff would have grown to over thirty failed connections (about 60 s).
    @Test func theFirstPostAfterAnOutageIsDelivered() async throws {
        let port = try LoopbackPort.free()
        let client = WebhookClient(url: "http://127.0.0.1:\(port)/hook", timeout: .seconds(10), maxConnections: 4)
        for attempt in 0..<30 {
            let result = await client.post(Array("{}".utf8), headers: [])
            guard case .failed(let detail) = result else {
                Issue.record("post \(attempt) to a port nothing listens on: \(result)")
                break
            }
            #expect(detail.hasPrefix("unreachable"), "\(detail)")
        }
        let router = Router()
        router.post("/hook") { _, _ in Response(status: .noContent) }
        let receiver = try await RunningServer.start { onRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) })
        }
        #expect(await client.post(Array("{}".utf8), headers: []) == .delivered)
        await client.shutdown()
        await receiver.stop()
    }
}
