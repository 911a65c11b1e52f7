import ServiceLifecycle

/// A client the service group owns: it does nothing until the group shuts down, then closes the
/// client. Listed before the services that use it, it is closed after them (the group shuts its
/// services down in reverse order).
package struct ClosingService: Service {
    let close: @Sendable () async -> Void

    package init(close: @escaping @Sendable () async -> Void) {
        self.close = close
    }

    package func run() async throws {
        // Ends on graceful shutdown or on cancellation; the client is closed either way.
        try? await gracefulShutdown()
        await close()
    }
}
