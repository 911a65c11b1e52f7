import Crypto
import Foundation
import Hummingbird
import PipelineCore
import IAPOperations
import Logging
import NIOCore
import PlainJSON
import RedisClient

/// The intake's HTTP API: accept a receipt and answer at once with a ticket; read a ticket.
/// It never calls Apple: the job goes to Redis and the workers do the rest.
package struct IntakeRoutes: Sendable {
    package let store: PipelineStore
    package let maxBodyBytes: Int
    package let ticketTTL: Duration
    /// Whether `transaction_id`-only submissions can be looked up (App Store Server API keys are set).
    package let serverAPIConfigured: Bool
    /// The apps accepted (`IAP_BUNDLE_IDS` or `IAP_APPS_FILE`): what a `bundle_id` may name.
    package let bundleIDs: Set<String>
    /// The rate limits; the per-key one applies when requests are signed (`IAP_CLIENT_KEYS_FILE`).
    package let limits: SubmissionLimits
    /// Serves `?wait=`; `nil`: a GET answers at once.
    package let waiters: TicketWaiters?
    /// Requests one client key may have waiting (`?wait=`) on this intake (`IAP_MAX_WAITING_PER_KEY`).
    package let maxWaitingPerKey: Int
    /// Submissions arriving together go to Redis in one call per bucket.
    let submissions: SubmitBatchers
    /// The longest `?wait=`, in seconds.
    package static let longestWait = 30

    package init(
        store: PipelineStore, maxBodyBytes: Int, ticketTTL: Duration, serverAPIConfigured: Bool = false, bundleIDs: Set<String> = [],
        limits: SubmissionLimits = .none, waiters: TicketWaiters? = nil, maxWaitingPerKey: Int = .max
    ) {
        self.maxWaitingPerKey = maxWaitingPerKey
        self.waiters = waiters
        self.bundleIDs = bundleIDs
        self.store = store
        self.submissions = SubmitBatchers(store: store)
        self.maxBodyBytes = maxBodyBytes
        self.ticketTTL = ticketTTL
        self.serverAPIConfigured = serverAPIConfigured
        self.limits = limits
    }

    package func register(on router: Router<IntakeRequestContext>) {
        router.post("/v1/receipts") { request, context in try await submit(request, context: context) }
        router.get("/v1/receipts/{ticket}") { request, context in try await ticket(request, context: context) }
        router.post("/v1/users/{user_id}/sync") { request, context in try await sync(request, context: context) }
        router.get("/healthz") { _, _ in json(.ok, ["status": "ok"]) }
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        router.get("/readyz") { _, _ in
            do {
                try await store.redis.send("PING")
                return json(.ok, ["status": "ready"])
            } catch {
                throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer")
            }
        }
    }

    func submit(_ request: Request, context: IntakeRequestContext) async throws -> Response {
        let buffer = try await Self.body(request, maxBodyBytes: maxBodyBytes)
        let submission = try ReceiptSubmission.parse(
            Array(buffer.readableBytesView), serverAPIConfigured: serverAPIConfigured, bundleIDs: bundleIDs)
        let evidence: Job.Evidence
        var transactionID = submission.transactionID
        switch submission.evidence {
        case .receipt(let base64, _): evidence = .receipt(base64)
        case .signedTransaction(let jws): evidence = .signedTransaction(jws)
        case .appTransaction(let jws):
            evidence = .appTransaction(jws)
            transactionID = nil
        case .transactionLookup(let id): evidence = .transactionLookup(id)
        }
        let work = Job.ToVerify(
            evidence: evidence, productID: submission.productID, transactionID: transactionID, currency: submission.currency)
        var job = Job(ticket: TicketID.make(), stage: .verify, userID: submission.userID, work: .verify(work), enqueuedAt: currentTimeMs())
        job.bundleID = submission.bundleID
        return try await store(job, digest: Self.digest(submission), context: context)
    }

    /// The job stored with its ticket in one step (`submit_receipt`), within the limits: `202`
    /// with a new ticket, `200` with the one the same evidence has; a precise `429` or `503` else.
    func store(_ job: Job, digest: String, context: IntakeRequestContext) async throws -> Response {
        var limits = limits
        // The key whose signature the door checked (never the header as sent).
        limits.clientKey = context.clientKey
        let stored: (ticket: String, created: Bool)
        do {
            stored = try await store.submit(job, receiptDigest: digest, ttl: ticketTTL, limits: limits, batching: submissions)
        } catch let refusal as RateLimitExceeded {
            let who = refusal.scope == .clientKey ? "this client key" : "this user"
            throw IntakeError(.tooManyRequests, "rate_limited", "too many new submissions this second for \(who); retry after 1 s")
        } catch let full as QueueFull {
            // Apple is slow or down and the backlog is at its bound: push back rather than fill Redis
            // (said once every 10 s, with how many were refused since: not a line per request).
            if let refused = queueFullRefusals.count() {
                context.logger.warning("the verify queue is full: new submissions are refused 503 queue_full", metadata: [
                    "depth": "\(full.depth)", "bucket_limit": "\(full.limit)", "refused": "\(refused)",
                ])
            }
            throw IntakeError(
                .serviceUnavailable, "queue_full", "too many receipts wait to be verified (IAP_MAX_QUEUE_DEPTH); resend later",
                retryAfter: IntakeError.noRoomRetryAfter)
        } catch RedisError.notReplicated(let detail) {
            // Stored on the primary, but a failover now could lose it: not acknowledged. The resend
            // finds the same ticket.
            context.logger.warning("a receipt job is not replicated yet", metadata: ["detail": "\(detail)"])
            throw IntakeError(.serviceUnavailable, "not_replicated", "the receipt is not yet on enough Redis replicas; resend it")
        } catch {
            context.logger.error("cannot store a receipt job", metadata: ["error": "\(error)"])
            throw IntakeError.redis(error, "the receipt could not be stored; try again")
        }
        var response: Response
        if stored.created {
            response = json(.accepted, ["ticket": stored.ticket, "status": TicketStatus.queued.rawValue])
        } else {
            let status = (try? await store.ticket(stored.ticket))?.status ?? .queued
            response = json(.ok, ["ticket": stored.ticket, "status": status.rawValue])
        }
        response.headers[.location] = "/v1/receipts/\(stored.ticket)"
        return response
    }

    /// `GET /v1/receipts/{ticket}[?wait=<seconds>]`: the ticket now, or, with `wait` (0 to 30),
    /// once it is terminal or held, or when the wait ends (then as it is).
    func ticket(_ request: Request, context: IntakeRequestContext) async throws -> Response {
        let id = context.parameters.get("ticket") ?? ""
        guard TicketID.isWellFormed(id) else {
            throw IntakeError(.notFound, "ticket_not_found", "no such ticket")
        }
        var wait = 0
        if let text = request.uri.queryParameters.get("wait") {
            guard let seconds = Int(text), (0...Self.longestWait).contains(seconds) else {
                throw IntakeError(.badRequest, "invalid_wait", "wait must be a whole number of seconds from 0 to \(Self.longestWait)")
            }
            wait = seconds
        }
        // Registered before the first read, so a change between the read and the wait is not missed.
        var registration: TicketWaiters.Registration?
        if wait > 0, let waiters {
            registration = waiters.register(id, caller: context.clientKey, limit: maxWaitingPerKey)
            guard registration != nil else {
                throw IntakeError(
                    .tooManyRequests, "too_many_waiting",
                    "this client key has \(maxWaitingPerKey) requests waiting on this intake already; wait for one to end")
            }
        }
        defer { if let registration { waiters?.cancel(registration) } }
        let deadline = ContinuousClock.now + .seconds(wait)
        var ticket = try await read(id, for: context)
        if let registration {
            while !ticket.status.isTerminal && ticket.status != .held, await TicketWaiters.next(registration, until: deadline) {
                ticket = try await read(id, for: context)
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: ticket.encoded())))
    }

    /// The ticket, if the caller may read it: on a signed intake, only the key that submitted it,
    /// or a key scoped `support`; any other is answered as if there were none.
    private func read(_ id: String, for context: IntakeRequestContext) async throws -> Ticket {
        let ticket: Ticket?
        do {
            ticket = try await store.ticket(id)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "tickets cannot be read right now")
        }
        guard let ticket else { throw IntakeError(.notFound, "ticket_not_found", "no such ticket") }
        if let caller = context.clientKey, let owner = ticket.clientKey, owner != caller, !context.clientScopes.contains(.support) {
            throw IntakeError(.notFound, "ticket_not_found", "no such ticket")
        }
        return ticket
    }

    /// One user's one piece of evidence: the same pair always maps to the same ticket.
    static func digest(_ submission: ReceiptSubmission) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(submission.userID.utf8))
        hasher.update(data: [0])
        hasher.update(data: submission.evidenceBytes)
        return Hex.encode(hasher.finalize())
    }

    /// A JSON body within the limit, or the precise refusal (415, 413).
    static func body(_ request: Request, maxBodyBytes: Int) async throws -> ByteBuffer {
        guard isJSON(request.headers[.contentType]) else {
            throw IntakeError(.unsupportedMediaType, "unsupported_media_type", "send the body as application/json")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            throw tooLarge(maxBodyBytes)
        }
        do {
            return try await request.body.collect(upTo: maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw tooLarge(maxBodyBytes)
        }
    }

    /// A JSON object body as plain values, or the precise refusal (`malformed_json`, 413, 415).
    static func jsonFields(_ request: Request, maxBodyBytes: Int) async throws -> JSONObject {
        let buffer = try await body(request, maxBodyBytes: maxBodyBytes)
        return try jsonFields(Array(buffer.readableBytesView))
    }

    static func jsonFields(_ bytes: [UInt8]) throws(IntakeError) -> JSONObject {
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: bytes)
        } catch {
            throw IntakeError(.badRequest, "malformed_json", "the body is not valid JSON (\(error.reason) at byte \(error.offset))")
        }
        guard case .object(let fields) = parsed else { throw IntakeError(.badRequest, "malformed_json", "the body must be a JSON object") }
        return fields
    }

    /// Whether the media type (before any `;` parameters, spaces around it, any case) is
    /// `application/json`. Read byte by byte: splitting, trimming and lowercasing the header
    /// cost 2 % of the intake's CPU.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let expected = "application/json".utf8
        var bytes = contentType.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }[...]
        for byte in expected {
            guard let next = bytes.popFirst() else { return false }
            let lowered = next >= UInt8(ascii: "A") && next <= UInt8(ascii: "Z") ? next | 0x20 : next
            guard lowered == byte else { return false }
        }
        let rest = bytes.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        return rest.first.map { $0 == UInt8(ascii: ";") } ?? true
    }

    static func tooLarge(_ limit: Int) -> IntakeError {
        IntakeError(.contentTooLarge, "body_too_large", "the body is larger than \(limit) bytes")
    }
}

func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
    json(status, JSONValue.object(object.mapValues(JSONValue.string)))
}

func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
    var bytes: [UInt8] = []
    value.write(into: &bytes)
    return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}
