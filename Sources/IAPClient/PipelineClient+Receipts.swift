import PlainJSON

extension PipelineClient {
    /// `POST /v1/receipts`. `bundleID`: the app, when the deployment serves several; `currency`:
    /// what the client says a legacy receipt was paid in; `productID` and `onlyTransactionID`:
    /// with a receipt, grant only that purchase.
    public func submit(
        _ evidence: Evidence, for user: String, bundleID: String? = nil, currency: String? = nil, productID: String? = nil,
        onlyTransactionID: String? = nil
    ) async throws -> Submission {
        let body = JSONValue.members([
            "user_id": .string(user), evidence.member.name: .string(evidence.member.value), "bundle_id": bundleID.json,
            "currency": currency.json, "product_id": productID.json, "transaction_id": onlyTransactionID.json,
        ])
        return try Self.submission(await call(.POST, "/v1/receipts", body: body))
    }

    /// `GET /v1/receipts/{ticket}`; with `wait` (0 to 30 s), answered as soon as the ticket is
    /// settled, or when the wait ends with the ticket as it is.
    public func ticket(_ id: String, wait: Duration? = nil) async throws -> Ticket {
        let query = wait.map { "?wait=\(min(max($0.components.seconds, 0), 30))" } ?? ""
        return Ticket(try await call(.GET, "/v1/receipts/\(Self.segment(id))" + query, wait: wait ?? .zero).json)
    }

    /// Long-polls until the ticket is settled (terminal or held), or `within` has passed (then the
    /// ticket as it is: ask again later).
    public func settled(_ id: String, within: Duration = .seconds(120)) async throws -> Ticket {
        let deadline = ContinuousClock.now + within
        while true {
            let left = deadline - ContinuousClock.now
            let ticket = try await ticket(id, wait: min(max(left, .zero), .seconds(30)))
            if ticket.isSettled || left <= .zero { return ticket }
        }
    }

    static func submission(_ reply: Reply) throws -> Submission {
        guard let ticket = reply.json["ticket"]?.string else {
            throw PipelineClientError(status: reply.status, code: "no_ticket", message: "the intake answered without a ticket")
        }
        return Submission(ticket: ticket, status: TicketStatus(rawValue: reply.json["status"]?.string ?? ""), isNew: reply.status == 202)
    }
}
