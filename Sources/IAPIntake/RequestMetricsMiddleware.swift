import Hummingbird
import IAPMetrics
import Metrics
import PipelineCore

/// Counts every request by route, method and status (`iap_http_requests_total`) and times it
/// (`iap_http_request_duration_seconds`). The route is the pattern that matched
/// (`/v1/receipts/{ticket}`), never a ticket or a user id.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context, status: response.status.code, started)
            return response
        } catch {
            record(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, started)
            throw error
        }
    }

    private func record(_ request: Request, _ context: Context, status: Int, _ started: ContinuousClock.Instant) {
        let route = RouteMethod(route: context.endpointPath ?? "unmatched", method: request.method.rawValue)
        requests[RouteStatus(route: route, status: status)].increment()
        durations[route].record(duration: ContinuousClock.now - started)
    }
}

private struct RouteMethod: Hashable, Sendable {
    let route: String
    let method: String
}

private struct RouteStatus: Hashable, Sendable {
    let route: RouteMethod
    let status: Int
}

// Made once per route, method and status (`MetricHandles`): they were made twice a request.
private let requests = MetricHandles<RouteStatus, Counter> { key in
    Counter(
        label: "iap_http_requests_total",
        dimensions: [("route", key.route.route), ("method", key.route.method), ("status", String(key.status))])
}

private let durations = MetricHandles<RouteMethod, Timer> { key in
    Timer(label: "iap_http_request_duration_seconds", dimensions: [("route", key.route), ("method", key.method)])
}
