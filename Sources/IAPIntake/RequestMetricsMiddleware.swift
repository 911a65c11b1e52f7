import Hummingbird
import Metrics

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
        let route = context.endpointPath ?? "unmatched"
        let method = request.method.rawValue
        Counter(label: "iap_http_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))])
            .increment()
        Timer(label: "iap_http_request_duration_seconds", dimensions: [("route", route), ("method", method)])
            .record(duration: ContinuousClock.now - started)
    }
}
