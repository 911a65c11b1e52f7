import Hummingbird
import IAPOperations
import PipelineCore
import PlainJSON

/// `GET /v1/reports/{report}?from=YYYY-MM-DD&to=YYYY-MM-DD&by=day|product|storefront|currency&environment=`:
/// revenue, subscriptions or refunds from the figures counted with the events (scope `reports`,
/// which no key has unless its file names it). docs/reports.md.
package struct ReportRoutes: Sendable {
    package let store: PipelineStore
    /// Now, in ms: the day a missing `to` means.
    package let now: @Sendable () -> Int64

    package init(store: PipelineStore, now: @escaping @Sendable () -> Int64 = { currentTimeMs() }) {
        self.store = store
        self.now = now
    }

    package func register(on router: Router<some RequestContext>) {
        router.get("/v1/reports/{report}") { request, context in try await report(request, context: context) }
    }

    func report(_ request: Request, context: some RequestContext) async throws -> Response {
        let parameters = request.uri.queryParameters
        let query: ReportQuery
        do {
            query = try ReportQuery(
                report: context.parameters.get("report") ?? "", from: parameters.get("from"), to: parameters.get("to"),
                by: parameters.get("by"), environment: parameters.get("environment"), today: FigureDay(milliseconds: now()))
        } catch {
            throw IntakeError(.badRequest, error.code, error.message)
        }
        let figures: [DayFigure]
        var subscribers: [DayFigure]?
        do {
            figures = try await store.reportFigures(of: query.days, now: now()).figures(by: query.by)
            if query.report == .subscriptions { subscribers = try await store.subscriberCells() }
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; try again")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: BusinessReport(query, figures: figures, subscriberCells: subscribers).json.canonicalText)))
    }
}
