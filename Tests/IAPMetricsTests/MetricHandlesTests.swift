import Metrics
import IAPMetrics
import Synchronization
import Testing

/// `MetricHandles`: a handle is made once per key once a real factory is in place, and never kept
/// while swift-metrics still has its no-op factory (it would stay a no-op after the bootstrap).
@Suite struct MetricHandlesTests {
    final class Made: Sendable {
        let key: String
        init(_ key: String) { self.key = key }
    }

    /// Counts the handles made, whatever the key.
    final class Making: Sendable {
        let count = Mutex(0)
        var handles: MetricHandles<String, Made> {
            MetricHandles { key in
                self.count.withLock { $0 += 1 }
                return Made(key)
            }
        }
    }

    @Test func aHandleIsMadeOncePerKeyOnceAFactoryIsBootstrapped() {
        let making = Making()
        let handles = making.handles
        withMetricsFactory(NotTheNoOp()) {
            let first = handles["a"]
            #expect(handles["a"] === first)
            #expect(handles["b"] !== first && handles["b"].key == "b")
            #expect(handles["b"] === handles["b"])
        }
        #expect(making.count.withLock { $0 } == 2)
    }

    @Test func noHandleIsKeptWhileTheFactoryIsTheNoOp() {
        let making = Making()
        let handles = making.handles
        withMetricsFactory(NOOPMetricsHandler.instance) {
            #expect(handles["a"] !== handles["a"])
        }
        #expect(making.count.withLock { $0 } == 2)
        withMetricsFactory(NotTheNoOp()) {
            #expect(handles["a"] === handles["a"])
        }
        #expect(making.count.withLock { $0 } == 3)
    }
}

/// A factory that is not swift-metrics' no-op one (its handlers do nothing either).
private struct NotTheNoOp: MetricsFactory {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { NOOPMetricsHandler.instance }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { NOOPMetricsHandler.instance }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
